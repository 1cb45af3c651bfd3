package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// store persists nodes.conf. It holds an exclusive flock on the file for as
// long as the node runs, so two nodes never share one config file.
//
// save is durable, in one of two forms. When the node's own id changed
// since the last such save (a new node, CLUSTER RESET HARD), it writes a
// temp file, fsyncs and locks it, renames it over nodes.conf and fsyncs
// the directory: a crash leaves either the old or the new file, and the
// lock moves with the new inode before it becomes visible. Any other
// change — an epoch or a vote of its own included, which the node must not
// act on before it is on disk — is written in place and fsync'd, as Redis
// 7.0 saves every change it fsyncs: one fsync, where the replacement costs
// two journal commits and a rename (a fifth of the time on the development
// machine's disk, and a manual failover's clients wait for the claim's
// save). saveNoSync writes in place without fsync (SETSLOT, and what the
// node learned, which the actor fsyncs with sync once the step's effects
// are out: Effects.Sync).
type store struct {
	path string
	lock *os.File
	// mark is durableMark of the last atomic save ("" before the first).
	mark string
}

// openStore locks path, creating it empty if it does not exist.
func openStore(path string) (*store, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("Can't open %s in order to acquire a lock: %w", path, err)
	}
	if err := flock(f); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("Sorry, the cluster configuration file %s is already used by a different "+
				"Redis Cluster node. Please make sure that different nodes use different cluster configuration files.", path)
		}
		return nil, fmt.Errorf("Impossible to lock %s: %w", path, err)
	}
	return &store{path: path, lock: f}, nil
}

func flock(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// read returns the file's content ("" for a new, empty file).
func (s *store) read() (string, error) {
	b, err := os.ReadFile(s.path)
	if err != nil {
		return "", fmt.Errorf("Loading the cluster node config from %s: %w", s.path, err)
	}
	return string(b), nil
}

// save replaces nodes.conf with text, durably (see store).
func (s *store) save(text string) error {
	mark := durableMark(text)
	if mark == s.mark {
		return s.inPlace(text, true)
	}
	if err := s.write(text, true); err != nil {
		return err
	}
	s.mark = mark
	return nil
}

// sync fsyncs what saveNoSync wrote.
func (s *store) sync() error {
	if s.lock == nil {
		return nil
	}
	return s.lock.Sync()
}

// saveNoSync rewrites nodes.conf in place without fsync, as Redis 7.0
// saves changes that carry no epoch or vote (CLUSTER SETSLOT): a rename
// costs a journal flush on most file systems, a write does not.
func (s *store) saveNoSync(text string) error { return s.inPlace(text, false) }

// inPlace writes text over the locked file, fsync'd if durable. The text
// is first padded with newlines to the old length (which Load skips) and
// truncated only after the write and fsync, so a process killed in
// between leaves a valid file; only an OS crash in the middle of the write
// can tear it, as in Redis 7.0.
func (s *store) inPlace(text string, durable bool) error {
	if s.lock == nil {
		return s.write(text, durable)
	}
	fi, err := s.lock.Stat()
	if err != nil {
		return err
	}
	b := []byte(text)
	if pad := int(fi.Size()) - len(b); pad > 0 {
		b = append(b, bytes.Repeat([]byte{'\n'}, pad)...)
	}
	if _, err := s.lock.WriteAt(b, 0); err != nil {
		return err
	}
	if durable {
		if err := s.lock.Sync(); err != nil {
			return err
		}
	}
	if len(b) == len(text) {
		return nil
	}
	return s.lock.Truncate(int64(len(text)))
}

// durableMark extracts from a nodes.conf text what an atomic save must
// protect: the myself line's id.
func durableMark(text string) string {
	for len(text) > 0 {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		if f := strings.Fields(line); len(f) >= 7 && hasFlag(f[2], "myself") {
			return f[0]
		}
	}
	return ""
}

func hasFlag(flags, flag string) bool {
	for _, f := range strings.Split(flags, ",") {
		if f == flag {
			return true
		}
	}
	return false
}

func (s *store) write(text string, durable bool) error {
	tmp := fmt.Sprintf("%s.tmp-%d-%d", s.path, os.Getpid(), time.Now().UnixNano())
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if err := writeLocked(f, text, durable); err != nil {
		_ = f.Close()
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, s.path); err != nil {
		_ = f.Close()
		_ = os.Remove(tmp)
		return err
	}
	// The new file is in place: it carries the lock from now on.
	old := s.lock
	s.lock = f
	if old != nil {
		_ = old.Close()
	}
	if !durable {
		return nil
	}
	return syncDir(filepath.Dir(s.path))
}

// writeLocked writes and fsyncs text, then takes the lock on the (still
// private) file.
func writeLocked(f *os.File, text string, durable bool) error {
	if _, err := f.WriteString(text); err != nil {
		return err
	}
	if !durable {
		return flock(f)
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return flock(f)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// close releases the lock.
func (s *store) close() {
	if s.lock != nil {
		_ = s.lock.Close()
		s.lock = nil
	}
}
