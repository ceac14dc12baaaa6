//go:build unix

package wireproto

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the ssh command in its own process group, so
// cancellation can stop the shell, ssh and anything they spawned.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
