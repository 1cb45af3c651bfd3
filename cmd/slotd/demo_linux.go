package main

import (
	"os/exec"
	"syscall"
)

// setChildAttrs puts a demo node in its own process group, so a terminal's
// Ctrl-C reaches only the demo (which then stops the nodes in order), and
// asks the kernel to send it SIGTERM if the demo process dies first.
func setChildAttrs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
