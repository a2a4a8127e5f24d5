// Package human prints measurements for people: rates and counts, latencies
// in milliseconds and byte sizes, each with the precision worth reading. The
// lab's progress lines and the report print numbers through it, so a figure
// reads the same on the terminal and in report.html.
package human

import "fmt"

// Count prints a rate or count with sensible precision.
func Count(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// Ms prints milliseconds with sensible precision (seconds from 1000 ms).
func Ms(ms float64) string {
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

// Bytes prints a byte count in binary units ("—" for none).
func Bytes(b float64) string {
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
