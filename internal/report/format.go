package report

import "fmt"

// SpreadWarning is the spread of throughput between trials, relative to
// their median, above which a result is called noisy.
const SpreadWarning = 0.10

// FormatCount prints a rate or count with sensible precision.
func FormatCount(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// FormatMs prints milliseconds with sensible precision.
func FormatMs(ms float64) string {
	switch {
	case ms >= 1000:
		return fmt.Sprintf("%.2fs", ms/1000)
	case ms >= 10:
		return fmt.Sprintf("%.0fms", ms)
	case ms >= 1:
		return fmt.Sprintf("%.1fms", ms)
	}
	return fmt.Sprintf("%.2fms", ms)
}

// FormatBytes prints a byte count in binary units ("—" for none).
func FormatBytes(b float64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.0f KiB", b/(1<<10))
	case b > 0:
		return fmt.Sprintf("%.0f B", b)
	}
	return "—"
}
