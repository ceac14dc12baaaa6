//go:build !unix

package txn

import (
	"errors"
	"os"
	"os/exec"
)

// killSelf ends the process at once, as TerminateProcess does.
func killSelf() { os.Exit(137) }

// killedBySIGKILL accepts killSelf's exit code.
func killedBySIGKILL(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.ExitCode() == 137
}
