//go:build slotd_notrace

package trace

// hooks: see hooks.go. This build has no tracing and no meter
// (trace-actors and metrics-port are accepted, have no effect, and the
// node says so at start-up), for
// measuring what the hooks cost when off (bench/main.go). A build for
// benchmarks only: the tests of tracing and metrics fail in it.
const hooks = false

// Built reports whether this binary has tracing and the meter (false in a
// -tags slotd_notrace build, where trace-actors and metrics-port cannot act).
func Built() bool { return hooks }
