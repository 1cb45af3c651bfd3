//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// daemonEnv marks the re-executed child of "daemonize yes".
const daemonEnv = "SLOTD_DAEMONIZED"

// daemonize implements "daemonize yes". Go cannot fork a running process
// (its threads would not follow), so the binary re-executes itself with the
// same arguments in a new session, stdio on /dev/null, and the parent
// exits at once, leaving the child detached, as redis-server's fork does.
// It reports whether this process is the parent (which must exit).
func daemonize() (parent bool, err error) {
	if os.Getenv(daemonEnv) != "" {
		return false, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return false, err
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return false, err
	}
	defer null.Close()
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Env = append(os.Environ(), daemonEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, null, null
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return false, fmt.Errorf("daemonize: %w", err)
	}
	_ = cmd.Process.Release()
	return true, nil
}
