package engine_test

import (
	"testing"

	"github.com/slotd/slotd/actors/engine/enginetest"
)

// The command tests here run the engine in-process (actors/engine/enginetest)
// and compare the exact bytes a node writes; those that need a whole node
// or a real redis-server are in cmd/node/cmdtest.

var (
	respBulk = enginetest.Bulk
	respErr  = enginetest.Err
	respInt  = enginetest.Int
	respNull = enginetest.Null
)

// newEngine is a new in-process engine (seed 1).
func newEngine(t testing.TB) *enginetest.Engine {
	t.Helper()
	enginetest.Register()
	return enginetest.New(enginetest.Options{Seed: 1})
}

// newClient is a client of a new in-process engine speaking proto.
func newClient(t *testing.T, proto int) *enginetest.Client {
	t.Helper()
	return newEngine(t).Client(proto)
}
