package cmdtest_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// MONITOR shows every other client's commands as redis-server does: the
// line format, quoting, scripts' commands as [db lua] after the EVAL,
// MULTI/EXEC, redacted AUTH; admin and refused commands are not shown.
func TestMonitorSameAsRedis(t *testing.T) {
	ref := nodetest.StartRedis(t)
	n := shardsNode(t)
	stamp := regexp.MustCompile(`^\+(\d+)\.\d{6} \[(\d+) (127\.0\.0\.1:\d+|lua)\] `)
	cmds := [][]string{
		{"SET", "k", "v \"q\" \\ \n\x01\xff"}, {"GET", "k"}, {"MULTI"}, {"INCR", "n"}, {"EXEC"},
		{"EVAL", "redis.call('set',KEYS[1],'x'); return redis.call('get',KEYS[1])", "1", "k"},
		{"AUTH", "x"}, {"CONFIG", "SET", "masterauth", "pw"}, {"CLIENT", "LIST"}, {"NOSUCH"}, {"GET"},
		{"DEL", "k"}, {"PING"},
	}
	lines := func(addr string) []string {
		m, c := respDial(t, addr, 2), respDial(t, addr, 2)
		assert.Equal(t, "+OK\r\n", m.Do("MONITOR"))
		for _, cmd := range cmds {
			c.Do(cmd...)
		}
		var out []string
		for len(out) == 0 || !strings.HasSuffix(out[len(out)-1], `"PING"`) {
			l := m.Read(respTimeout)
			sm := stamp.FindStringSubmatch(l)
			if !assert.NotNil(t, sm, l) {
				return out
			}
			assert.InDelta(t, float64(time.Now().Unix()), float64(atoi(t, sm[1])), 5)
			who := "addr"
			if sm[3] == "lua" {
				who = "lua"
			}
			out = append(out, sm[2]+" "+who+" "+l[len(sm[0]):len(l)-2])
		}
		return out
	}
	want := lines(ref)
	assert.Equal(t, want, lines(n.Addr))
	assert.Len(t, want, 11)
}

func atoi(t *testing.T, s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	assert.NoError(t, err)
	return n
}
