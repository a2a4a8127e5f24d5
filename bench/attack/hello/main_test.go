package main

import (
	"testing"
	"time"
)

func TestStallLeft(t *testing.T) {
	s, e := time.Second, 5*time.Second
	tests := []struct {
		elapsed, want time.Duration
	}{
		{0, 0},                         // the first period starts answering
		{3999 * time.Millisecond, 0},   // just before the stall
		{4 * time.Second, time.Second}, // the stall's first instant waits all of it
		{4500 * time.Millisecond, 500 * time.Millisecond}, // halfway
		{5 * time.Second, 0},                              // the next period answers again
		{9250 * time.Millisecond, 750 * time.Millisecond}, // the second stall
	}
	for _, tt := range tests {
		if got := stallLeft(tt.elapsed, s, e); got != tt.want {
			t.Errorf("stallLeft(%s) = %s, want %s", tt.elapsed, got, tt.want)
		}
	}
}
