package fuseuring

import "testing"

// TestCountCPUs: the kernel's CPU lists, counted as num_possible_cpus
// counts them, and what is not one refused.
func TestCountCPUs(t *testing.T) {
	for list, want := range map[string]int{"0": 1, "0-1": 2, "0-63": 64, "0-3,5": 5, "0,2,4-5": 4} {
		if n, err := countCPUs(list); err != nil || n != want {
			t.Errorf("countCPUs(%q) = %d, %v; want %d", list, n, err, want)
		}
	}
	for _, list := range []string{"", "x", "3-1", "-1", "0-", "0-99999999"} {
		if n, err := countCPUs(list); err == nil {
			t.Errorf("countCPUs(%q) = %d, want an error", list, n)
		}
	}
}
