package main

import (
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDemoScenarios runs each "slotd demo <scenario>" and reads the figure
// it ends with.
func TestDemoScenarios(t *testing.T) {
	out, err := exec.Command(slotdBinary(t), "demo", "--help").CombinedOutput()
	require.NoError(t, err, string(out))
	for _, name := range []string{"moved", "lost-write", "minority", "coverage"} {
		assert.Regexp(t, "(?m)^  "+name+" ", string(out), "demo --help lists %s", name)
	}
	for _, c := range []struct {
		name, want string
	}{
		{"moved", `^300 writes; redirected with MOVED without the slot map: [1-9]\d*, with it: 0$`},
		{"lost-write", `^acknowledged: 1 write \(SET \S+ v2\), present after failover: 0$`},
		{"minority", `^acknowledged by the cut-off primary after the cut: [1-9]\d* writes in [\d.]+s; present after the heal: 0 \(lost [1-9]\d*\)$`},
		{"coverage", `^shards taking writes with cluster-require-full-coverage yes: 0 of 3; with no: 2 of 3 \(slots served: 10923 of 16384\)$`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			base := freePorts(t, 12)
			cmd := exec.Command(slotdBinary(t), "demo", c.name, "--port", strconv.Itoa(base))
			done := make(chan struct{})
			var out []byte
			var err error
			go func() { out, err = cmd.CombinedOutput(); close(done) }()
			select {
			case <-done:
			case <-time.After(3 * time.Minute):
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("demo %s did not finish:\n%s", c.name, out)
			}
			require.NoError(t, err, string(out))
			text := string(out)
			assert.Contains(t, text, "== slotd demo "+c.name+": ")
			assert.Regexp(t, `\[\s*\d+\.\d{3}s\] 127\.0\.0\.1:\d+> `, text, "narrated as a redis-cli session")
			i := strings.LastIndex(text, "\nResult: ")
			require.GreaterOrEqual(t, i, 0, text)
			result := strings.TrimSpace(strings.SplitN(text[i+len("\nResult: "):], "\n", 2)[0])
			assert.Regexp(t, regexp.MustCompile(c.want), result, text)
		})
	}
}
