package cmdtest_test

import "testing"

// TestArgErrorBeforeCrossSlot: a numkeys one too many makes an option word
// a key of another slot; a node not in cluster mode then answers Redis's
// syntax error, not CROSSSLOT, also from EXEC.
func TestArgErrorBeforeCrossSlot(t *testing.T) {
	_, _, both := dumpPair(t)
	for _, cmd := range [][]string{
		{"LMPOP", "2", "{k}l0", "LEFT", "COUNT", "2"},
		{"BLMPOP", "0.01", "2", "{k}l0", "RIGHT", "COUNT", "1"},
		{"ZMPOP", "2", "{k}z0", "MIN", "COUNT", "1"},
		{"BZMPOP", "0.01", "2", "{k}z0", "MAX"},
		{"SINTERCARD", "3", "{k}t0", "{k}t1", "LIMIT", "1"},
		{"BLMPOP", "abc", "2", "{k}l0", "LEFT", "COUNT", "1"},
	} {
		both(cmd...)
		both("MULTI")
		both(cmd...)
		both("EXEC")
	}
}
