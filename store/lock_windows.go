package store

import (
	"os"

	"golang.org/x/sys/windows"
)

// makeLock creates the lock at path naming info, atomically: on Windows
// a file created with O_EXCL holding info, the form util.makelock falls
// back to where a symlink cannot be made (Windows without the
// privilege or developer mode; under Wine a symlink's target is not
// read back). hg reads either form (util.readlock), as readLock does.
func makeLock(info, path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(info)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

// processAlive is win32.testpid: the process can be opened and has not
// exited, or opening it failed for another reason than its absence.
func processAlive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return err != windows.ERROR_INVALID_PARAMETER
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return true
	}
	return code == 259 // STILL_ACTIVE
}

func pidNamespaceInode() (uint64, bool) { return 0, false }
