package slots

// ParseSlot parses a slot number the way CLUSTER subcommands do (Redis parses
// the argument with its strict string-to-long-long conversion, then checks
// the range): a plain decimal integer with no sign, no spaces and no leading
// zeros ("0" itself is fine), in 0..NumSlots-1. ok is false otherwise.
func ParseSlot(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 5 || (b[0] == '0' && len(b) > 1) {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if n >= NumSlots {
		return 0, false
	}
	return n, true
}
