// Package report turns results into what people read: a self-contained
// HTML report with charts, Markdown tables (summary.md), JSON and CSV, and
// benchstat-style comparisons between runs or implementations.
//
// Load reads a showdown results folder (run.json), an attack --out folder
// (summary.json), a JMeter .jtl in CSV form or a k6 JSON output, all into
// the shape of a plan run (package imported converts the last three);
// Summarize computes the tables; WriteHTML,
// WriteMarkdown, WriteJSON and WriteCSV render them; WriteFiles writes
// report.html and summary.md into a results folder; SideOf, BetweenSides,
// CompareSides and WriteComparison compare.
//
// The charts are SVG drawn here in Go, not a JavaScript chart library
// embedded into the binary. The report must open offline, from a file or
// an e-mail attachment, and print well: inline SVG needs no script to
// draw, prints as vectors, scales with the page, and costs nothing to
// embed, where a library (uPlot is 50 KB, Chart.js 200 KB) would have to
// be vendored, kept up to date and run before anything shows. Hover values
// are SVG <title> elements (points, and one band per second of a time
// series spanning every panel). The one script in the page only checks
// that every chart drew, for the browser test.
package report
