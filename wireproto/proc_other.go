//go:build !unix

package wireproto

import "os/exec"

// setProcessGroup: no process groups here; killing the shell is the best
// available.
func setProcessGroup(cmd *exec.Cmd) {}

func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
