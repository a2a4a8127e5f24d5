package lab

import (
	"os"
	"testing"
)

// TestParseNMT reads a real `jcmd PID VM.native_memory summary` of
// Temurin 25 (testdata/nmt): totals and every category, in the JVM's order.
func TestParseNMT(t *testing.T) {
	b, err := os.ReadFile("testdata/nmt/temurin25-summary.txt")
	if err != nil {
		t.Fatal(err)
	}
	nm := parseNMT(string(b))
	if nm.Error != "" {
		t.Fatal(nm.Error)
	}
	if nm.ReservedBytes != 7733936<<10 || nm.CommittedBytes != 474932<<10 {
		t.Errorf("totals %d / %d, want 7733936 KB reserved, 474932 KB committed", nm.ReservedBytes, nm.CommittedBytes)
	}
	want := map[string]int64{"Java Heap": 393216, "Class": 1111, "Thread": 939, "Code": 7993, "GC": 45359, "Native Memory Tracking": 694, "Shared class space": 13908}
	got := map[string]int64{}
	for _, c := range nm.Categories {
		got[c.Name] = c.CommittedBytes >> 10
	}
	for name, kb := range want {
		if got[name] != kb {
			t.Errorf("%s: committed %d KB, want %d", name, got[name], kb)
		}
	}
	if nm.Categories[0].Name != "Java Heap" {
		t.Errorf("first category %q, want the JVM's order (Java Heap first)", nm.Categories[0].Name)
	}
	// Output without a summary (NMT off) is an error, not zeros.
	if off := parseNMT("12345:\nNative memory tracking is not enabled\n"); off.Error == "" {
		t.Error("no error for a JVM without tracking")
	}
}
