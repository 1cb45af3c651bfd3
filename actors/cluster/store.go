package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// store persists nodes.conf. It holds an exclusive flock on the file for as
// long as the node runs, so two nodes never share one config file. Every
// save writes a temp file, fsyncs it, locks it, renames it over nodes.conf
// and fsyncs the directory: a crash leaves either the old or the new file,
// and the lock moves with the new inode before it becomes visible.
type store struct {
	path string
	lock *os.File
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

// save replaces nodes.conf with text, durably.
func (s *store) save(text string) error { return s.write(text, true) }

// saveNoSync rewrites nodes.conf in place without fsync, as Redis 7.0
// saves changes that carry no epoch or vote (CLUSTER SETSLOT): a rename
// costs a journal flush on most file systems, a write does not. The text
// is first padded with newlines to the old length (which Load skips), so a
// process killed between the write and the truncate leaves a valid file;
// only an OS crash can lose or tear the update, as in Redis.
func (s *store) saveNoSync(text string) error {
	if s.lock == nil {
		return s.write(text, false)
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
	return s.lock.Truncate(int64(len(text)))
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
