package faults

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/showdownlab/showdown/internal/results"
)

// WriteTable prints the tests' rows as an aligned text table, then each
// test's whole-run line and its problems.
func WriteTable(w io.Writer, tests []*results.FaultTest) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(results.FaultColumns, "\t")+"\t")
	for _, ft := range tests {
		for _, r := range ft.Rows {
			fmt.Fprintln(tw, strings.Join(r.Cells(), "\t")+"\t")
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, ft := range tests {
		fmt.Fprintf(w, "%s: %s; %d workers, %s per fault; ledger %d transfers, %d extra, %d duplicate; sum of balances %d before, %d after, %d snapshots; %s\n",
			ft.Stack, strings.ToUpper(ft.Verdict), ft.Workers, results.FormatFaultDuration(ft.PerFault), ft.Transfers, ft.Extra, ft.Duplicates,
			ft.TotalBefore, ft.TotalAfter, ft.Snapshots, ft.Durability)
		for _, r := range ft.Rows {
			for _, p := range r.Problems {
				fmt.Fprintf(w, "  - %s %s: %s\n", ft.Stack, r.Fault, p)
			}
		}
		for _, p := range ft.Problems {
			if !strings.Contains(p, " problems") {
				fmt.Fprintf(w, "  - %s: %s\n", ft.Stack, p)
			}
		}
	}
	return nil
}
