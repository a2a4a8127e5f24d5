package human

import "testing"

func TestHuman(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		// counts: whole from 100, one decimal from 10, two below
		{Count(1234.5), "1234"},
		{Count(12.34), "12.3"},
		{Count(1.234), "1.23"},
		// milliseconds: seconds from 1000 ms, whole from 10, one decimal from 1
		{Ms(1500), "1.50s"},
		{Ms(12.4), "12ms"},
		{Ms(1.24), "1.2ms"},
		{Ms(0.123), "0.12ms"},
		// bytes in binary units, a dash for none
		{Bytes(3 << 30), "3.00 GiB"},
		{Bytes(1.5 * (1 << 20)), "1.5 MiB"},
		{Bytes(2048), "2 KiB"},
		{Bytes(12), "12 B"},
		{Bytes(0), "—"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
