package engine_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScriptTransactions: EVAL inside MULTI runs with the transaction, and
// a script's writes invalidate WATCH like any write.
func TestScriptTransactions(t *testing.T) {
	e := newEngine(t)
	a, b := e.Client(2), e.Client(2)
	incr := "return redis.call('incr', KEYS[1])"

	assert.Equal(t, "+OK\r\n", a.Do("MULTI"))
	assert.Equal(t, "+QUEUED\r\n", a.Do("EVAL", incr, "1", "{t}x"))
	assert.Equal(t, "+QUEUED\r\n", a.Do("INCR", "{t}x"))
	assert.Equal(t, "+QUEUED\r\n", a.Do("EVAL", incr, "1", "{t}x"))
	assert.Equal(t, "*3\r\n:1\r\n:2\r\n:3\r\n", a.Do("EXEC"))

	// Queueing checks routing: a script with keys in two slots is refused.
	assert.Equal(t, "+OK\r\n", a.Do("MULTI"))
	assert.Equal(t, respErr("CROSSSLOT Keys in request don't hash to the same slot"), a.Do("EVAL", incr, "2", "{t}x", "{u}y"))
	assert.Equal(t, respErr("EXECABORT Transaction discarded because of previous errors."), a.Do("EXEC"))

	// A script's write dirties a WATCH.
	assert.Equal(t, "+OK\r\n", a.Do("WATCH", "{t}x"))
	assert.Equal(t, ":4\r\n", b.Do("EVAL", incr, "1", "{t}x"))
	assert.Equal(t, "+OK\r\n", a.Do("MULTI"))
	assert.Equal(t, "+QUEUED\r\n", a.Do("EVAL", incr, "1", "{t}x"))
	assert.Equal(t, "*-1\r\n", a.Do("EXEC"))
	// A read-only script does not.
	assert.Equal(t, "+OK\r\n", a.Do("WATCH", "{t}x"))
	assert.Equal(t, respBulk("4"), b.Do("EVAL", "return redis.call('get', KEYS[1])", "1", "{t}x"))
	assert.Equal(t, "+OK\r\n", a.Do("MULTI"))
	assert.Equal(t, "+QUEUED\r\n", a.Do("EVAL", incr, "1", "{t}x"))
	assert.Equal(t, "*1\r\n:5\r\n", a.Do("EXEC"))
}

// TestScriptWakesBlockedClient: a push made by a script serves a client
// blocked on the list, at once.
func TestScriptWakesBlockedClient(t *testing.T) {
	e := newEngine(t)
	blocked, c := e.Client(2), e.Client(2)
	start := e.Now()
	blocked.Send("BLPOP", "q", "10")
	require.True(t, blocked.Blocked())
	assert.Equal(t, ":1\r\n", c.Do("EVAL", "return redis.call('rpush', KEYS[1], 'job')", "1", "q"))
	require.False(t, blocked.Blocked())
	assert.Equal(t, "*2\r\n"+respBulk("q")+respBulk("job"), blocked.Reply())
	assert.Equal(t, start, e.Now(), "served before any timeout")
}
