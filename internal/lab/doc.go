// Package lab runs whole experiments: it builds the services a plan
// names, starts the private databases, measures the machine's noise,
// pins the generator, and then runs the plan's way of measuring
// (packages rounds, capacity and sequential), offering it what every way
// shares (package measure's interfaces): starting, freezing and thawing
// arms (package stack), contract checks, warm-ups, levels with their
// resources (package monitor) and audits, progress, and the results
// folder in the model of package results.
package lab
