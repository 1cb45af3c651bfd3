//go:build !slotd_notrace

package trace

// hooks is false in a binary built with -tags slotd_notrace: tracing and
// the meter compiled out, the baseline that bench's cost check compares a
// normal build (tracing off) with.
const hooks = true

// Built reports whether this binary has tracing and the meter (false in a
// -tags slotd_notrace build, where trace-actors and metrics-port cannot act).
func Built() bool { return hooks }
