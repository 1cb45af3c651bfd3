package difftest

import (
	"os"
	"strconv"
	"testing"
	"time"
)

func TestScratchHang(t *testing.T) {
	seed, _ := strconv.Atoi(os.Getenv("SCRATCH_SEED"))
	addr := StartRedis(t, "--hz", "100")
	seq := Generate(uint64(seed), 2000, nil)
	c, err := dial(addr, 2+seed%2)
	if err != nil {
		t.Fatal(err)
	}
	for i, cmd := range seq {
		start := time.Now()
		c.c.SetDeadline(time.Now().Add(3 * time.Second))
		rs, err := c.do([]Cmd{cmd})
		if err != nil || time.Since(start) > time.Second {
			t.Fatalf("%d %s: %v %v", i, quoteCmd(cmd), err, time.Since(start))
		}
		_ = rs
	}
}
