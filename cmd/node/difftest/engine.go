package difftest

import (
	"bufio"
	"fmt"
	"strings"
	"time"

	"github.com/slotd/slotd/actors/engine/enginetest"
)

// server is one side of a comparison: a RESP connection (conn) or a client
// of an in-process engine (engineConn).
type server interface {
	do(cmds []Cmd) ([]*Reply, error)
	close()
}

// engineConn is a client of an in-process engine (actors/engine/enginetest):
// commands run one after another in the engine, as a node runs a client's
// pipeline, and come back as the exact bytes the node would write.
type engineConn struct {
	e      *enginetest.Engine
	c      *enginetest.Client
	wall   bool             // move the virtual clock to the wall clock first
	record func(raw string) // every reply, when set
}

func (ec *engineConn) close() {}

func (ec *engineConn) do(cmds []Cmd) (out []*Reply, err error) {
	if ec.wall {
		ec.e.AdvanceTo(time.Now())
	}
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("in-process engine: %v", p)
		}
	}()
	out = make([]*Reply, len(cmds))
	for i, c := range cmds {
		raw := ec.c.Do(c...)
		if ec.record != nil {
			ec.record(raw)
		}
		r := bufio.NewReader(strings.NewReader(raw))
		rep, err := readReply(r)
		if err == nil && r.Buffered() > 0 {
			err = fmt.Errorf("%d bytes after the reply", r.Buffered())
		}
		if err != nil {
			return nil, fmt.Errorf("reply %d (%q) %q: %w", i, c, raw, err)
		}
		out[i] = rep
	}
	return out, nil
}

// EngineHas reports, for Generate, whether the in-process engine serves a
// command: ops of the commands a node answers outside the engine (SCRIPT,
// CONFIG, ...) stay out of in-process runs.
func EngineHas(name string) bool { return enginetest.Serves(name) }

// ReplayInProcess runs seq on a client of e speaking proto and returns
// every reply's exact bytes, in order.
func ReplayInProcess(e *enginetest.Engine, proto int, seq []Cmd) ([]string, error) {
	var out []string
	ec := &engineConn{e: e, c: e.Client(proto), record: func(raw string) { out = append(out, raw) }}
	_, err := ec.do(seq)
	return out, err
}
