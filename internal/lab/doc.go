// Package lab runs whole experiments: it executes a plan (package plan)
// cell by cell, brings each service up and down through package stack,
// drives the load with package load, samples resources with package
// monitor, audits the databases and writes a results folder in the model
// of package results.
package lab
