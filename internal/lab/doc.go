// Package lab runs whole experiments: it builds the services a plan
// names, starts the private databases, measures the machine's noise,
// pins the generator, and then conducts the plan's design (package
// design: interleaved rounds, a capacity search or sequential starts),
// offering it what every design shares: starting, freezing and thawing
// arms (package stack), contract checks, warm-ups, levels with their
// resources (package monitor) and audits, progress, and the results
// folder in the model of package results.
package lab
