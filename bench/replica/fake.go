package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// fakeReplica is the B2 replica: a connection of this process that does
// the replica handshake, then reads and discards the primary's stream,
// keeping only the replication offset, and acknowledges it every second
// (and when a slotd primary asks). The primary pays for producing and
// writing its stream; nobody pays for applying it on this machine.
type fakeReplica struct {
	kind string
	conn net.Conn
	r    *bufio.Reader

	wmu    sync.Mutex // ACK writes
	mu     sync.Mutex
	vec    []int64 // slotd: per-shard offsets read
	offset atomic.Int64
	synced chan struct{} // closed once the initial sync was read
	done   chan struct{} // closed when the reader stops
	err    error         // why the reader stopped (read after done)
	closed atomic.Bool
}

// dialFake connects to the primary at addr and starts replicating.
func dialFake(kind, addr string) (*fakeReplica, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return nil, err
	}
	f := &fakeReplica{kind: kind, conn: c, r: bufio.NewReaderSize(c, 256<<10),
		synced: make(chan struct{}), done: make(chan struct{})}
	if err := f.handshake(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("%s fake replica handshake: %w", kind, err)
	}
	go f.read()
	go f.acker()
	return f, nil
}

func (f *fakeReplica) call(args ...string) (string, error) {
	if _, err := f.conn.Write(encode(args...)); err != nil {
		return "", err
	}
	for {
		line, err := f.r.ReadString('\n')
		if err != nil {
			return "", err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			continue // keepalive newline
		}
		if line[0] == '-' {
			return "", fmt.Errorf("%s: %s", args[0], line[1:])
		}
		return line[1:], nil
	}
}

func (f *fakeReplica) handshake() error {
	_ = f.conn.SetDeadline(time.Now().Add(10 * time.Second))
	defer f.conn.SetDeadline(time.Time{})
	lport := strconv.Itoa(f.conn.LocalAddr().(*net.TCPAddr).Port)
	// slotd serves PSYNC only to replicas announcing capa slotd and then
	// speaks its framed per-shard protocol; redis-server gets the
	// standard handshake (no capa eof: the RDB comes with a length).
	capa := "psync2"
	if f.kind == "slotd" {
		capa = "slotd"
	}
	for _, cmd := range [][]string{{"PING"}, {"REPLCONF", "listening-port", lport}, {"REPLCONF", "capa", capa}} {
		if _, err := f.call(cmd...); err != nil {
			return err
		}
	}
	line, err := f.call("PSYNC", "?", "-1")
	if err != nil {
		return err
	}
	fields := strings.Fields(line)
	if len(fields) != 3 || fields[0] != "FULLRESYNC" {
		return fmt.Errorf("PSYNC replied %q", line)
	}
	if f.kind == "slotd" {
		for _, s := range strings.Split(fields[2], ",") {
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return fmt.Errorf("FULLRESYNC offsets %q", fields[2])
			}
			f.vec = append(f.vec, v)
		}
		f.offset.Store(sum(f.vec))
		return nil
	}
	v, err := strconv.ParseInt(fields[2], 10, 64)
	if err != nil {
		return fmt.Errorf("FULLRESYNC offset %q", fields[2])
	}
	f.offset.Store(v)
	return nil
}

func (f *fakeReplica) read() {
	var err error
	if f.kind == "slotd" {
		err = f.readSlotd()
	} else {
		err = f.readRedis()
	}
	if f.closed.Load() {
		err = nil
	}
	f.err = err
	close(f.done)
}

// readRedis skips the RDB payload ("$<len>\r\n" then len bytes, after
// keepalive newlines while the primary saves it), then counts the bytes
// of the command stream.
func (f *fakeReplica) readRedis() error {
	var line string
	for line == "" {
		s, err := f.r.ReadString('\n')
		if err != nil {
			return err
		}
		line = strings.TrimRight(s, "\r\n")
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(line, "$"), 10, 64)
	if line[0] != '$' || err != nil {
		return fmt.Errorf("expected the RDB length, got %q", line)
	}
	if _, err := io.CopyN(io.Discard, f.r, n); err != nil {
		return err
	}
	close(f.synced)
	f.ack()
	buf := make([]byte, 256<<10)
	for {
		m, err := f.r.Read(buf)
		f.offset.Add(int64(m))
		if err != nil {
			return err
		}
	}
}

// slotd frame layout (actors/repl/proto.go): kind u8 | shard u16 |
// offset u64 | length u32, little endian, then the payload.
const slotdFrameHdr = 15

// readSlotd follows the frames: stream (S) and snapshot (D) frames carry
// their shard's offset after them, E marks a shard's snapshot done, G
// asks for an ACK now.
func (f *fakeReplica) readSlotd() error {
	var hdr [slotdFrameHdr]byte
	syncedShards := 0
	for {
		if _, err := io.ReadFull(f.r, hdr[:]); err != nil {
			return err
		}
		kind := hdr[0]
		sh := int(binary.LittleEndian.Uint16(hdr[1:]))
		off := int64(binary.LittleEndian.Uint64(hdr[3:]))
		size := int64(binary.LittleEndian.Uint32(hdr[11:]))
		if _, err := io.CopyN(io.Discard, f.r, size); err != nil {
			return err
		}
		switch kind {
		case 'S', 'D':
			f.mu.Lock()
			if sh >= len(f.vec) {
				f.mu.Unlock()
				return fmt.Errorf("frame for shard %d of %d", sh, len(f.vec))
			}
			f.vec[sh] = off
			f.offset.Store(sum(f.vec))
			f.mu.Unlock()
		case 'E':
			if syncedShards++; syncedShards == len(f.vec) {
				close(f.synced)
				f.ack()
			}
		case 'G':
			f.ack()
		case 'P', 'M':
		default:
			return fmt.Errorf("unknown frame kind %q", kind)
		}
	}
}

// ack sends REPLCONF ACK: the byte offset for redis-server, the
// comma-separated per-shard offsets for slotd.
func (f *fakeReplica) ack() {
	var v string
	if f.kind == "slotd" {
		f.mu.Lock()
		parts := make([]string, len(f.vec))
		for i, x := range f.vec {
			parts[i] = strconv.FormatInt(x, 10)
		}
		f.mu.Unlock()
		v = strings.Join(parts, ",")
	} else {
		v = strconv.FormatInt(f.offset.Load(), 10)
	}
	f.wmu.Lock()
	_ = f.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, _ = f.conn.Write(encode("REPLCONF", "ACK", v))
	f.wmu.Unlock()
}

func (f *fakeReplica) acker() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-f.done:
			return
		case <-t.C:
			select {
			case <-f.synced:
				f.ack()
			default:
			}
		}
	}
}

// waitSynced waits for the end of the initial sync.
func (f *fakeReplica) waitSynced(timeout time.Duration) error {
	select {
	case <-f.synced:
		return nil
	case <-f.done:
		return fmt.Errorf("fake replica stopped during the initial sync: %v", f.err)
	case <-time.After(timeout):
		return errors.New("fake replica: initial sync timed out")
	}
}

// broken reports why the link dropped, or nil while it is up.
func (f *fakeReplica) broken() error {
	select {
	case <-f.done:
		if f.err == nil {
			return errors.New("closed")
		}
		return f.err
	default:
		return nil
	}
}

func (f *fakeReplica) close() {
	f.closed.Store(true)
	_ = f.conn.Close()
	<-f.done
}

func sum(v []int64) int64 {
	var n int64
	for _, x := range v {
		n += x
	}
	return n
}
