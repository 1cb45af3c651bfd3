package resp

import (
	"strconv"
	"testing"
)

// BenchmarkParsePipelinedGET parses a stream of 16 pipelined GETs; it must
// report 0 allocs/op once the parser is warm.
func BenchmarkParsePipelinedGET(b *testing.B) {
	var buf []byte
	for i := 0; i < 16; i++ {
		k := "key:" + strconv.Itoa(100000+i)
		buf = append(buf, "*2\r\n$3\r\nGET\r\n$"+strconv.Itoa(len(k))+"\r\n"+k+"\r\n"...)
	}
	var p Parser
	b.ReportAllocs()
	b.SetBytes(int64(len(buf)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rest := buf
		for len(rest) > 0 {
			args, n, err := p.Parse(rest)
			if err != nil || n == 0 || len(args) != 2 {
				b.Fatal("bad parse")
			}
			rest = rest[n:]
		}
	}
}

func TestParseAllocFree(t *testing.T) {
	buf := []byte("*2\r\n$3\r\nGET\r\n$5\r\nkey:1\r\n")
	var p Parser
	p.Parse(buf)
	allocs := testing.AllocsPerRun(1000, func() {
		if _, n, _ := p.Parse(buf); n != len(buf) {
			t.Fatal("bad parse")
		}
	})
	if allocs != 0 {
		t.Fatalf("parse allocated %v times per command", allocs)
	}
}
