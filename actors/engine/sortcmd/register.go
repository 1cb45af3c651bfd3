// Package sortcmd owns SORT and SORT_RO: sorting a list, set or sorted
// set by its elements or by keys its BY pattern names, fetching GET
// patterns, and storing the result as a list.
package sortcmd

import "sync"

var registerOnce sync.Once

// Register adds SORT and SORT_RO to the command table and binds their
// implementations. The wiring calls it (once per process is enough; later
// calls do nothing) before any node runs.
func Register() {
	registerOnce.Do(registerSort)
}
