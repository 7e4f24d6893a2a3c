#pragma once
// What planck undoes when SIGTERM, SIGINT or SIGHUP ends it: the temporary file of an -o write
// in progress is removed (PATH.tmp.PID, docs/files.md) and helper processes (the Python registry
// reader) are killed with their whole process group, so nothing is left behind (issue 34: a
// killed planck left PATH.tmp.PID and an orphaned python3 growing under PID 1).
//
// The handlers are installed on first use and only touch async-signal-safe state: fixed slots
// of paths and process-group ids. After cleaning up, the signal's default action runs (the exit
// status stays "killed by SIGTERM").

#include <sys/types.h>

namespace planck::core {

// A file to unlink if a signal ends planck before forget_temp_file. False when all slots are in
// use (the file then survives a kill, as before). `path` must outlive the registration.
bool remember_temp_file(const char* path);
void forget_temp_file(const char* path);

// A child process group to SIGKILL if a signal ends planck before forget_child_group.
bool remember_child_group(pid_t pgid);
void forget_child_group(pid_t pgid);

}  // namespace planck::core
