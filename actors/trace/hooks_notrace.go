//go:build slotd_notrace

package trace

// hooks: see hooks.go. This build has no tracing and no meter
// (trace-actors and metrics-port are accepted and have no effect), for
// measuring what the hooks cost when off (bench/main.go). A build for
// benchmarks only: the tests of tracing and metrics fail in it.
const hooks = false
