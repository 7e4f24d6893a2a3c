#pragma once
// Writing a command's output (`-o PATH`) without ever losing what is at PATH (docs/files.md):
//  - "-" or "" or /dev/stdout (/dev/fd/1): standard output; /dev/stderr (/dev/fd/2): standard
//    error; /dev/fd/N: that descriptor. Written through, never renamed over.
//  - a symlink is followed to its target, which is what gets written;
//  - an absent path or a regular file: a temporary file in the same directory, then rename, so a
//    reader never sees half a report; a replaced file keeps its permission bits;
//  - a character or block device or a FIFO: opened and written through (no rename), so
//    /dev/null, /dev/full or a named pipe stay what they are and a write error is an error;
//  - refused before any work: a directory, a socket, a path whose directory is missing or not
//    writable, a read-only file (unless `force`), and a file that is one of the inputs
//    (same device and inode).

#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"

namespace planck::core {

// True when `path` means standard output ("-", "", /dev/stdout, /dev/fd/1, /proc/self/fd/1).
bool output_is_stdout(const std::string& path);

// The checks above, before any work. `inputs` are the command's other arguments: any that names
// the same file as the output (after symlinks) is refused; values that are not files are ignored.
Status check_output(const std::string& path, const std::vector<std::string>& inputs, bool force);

// Writes `content` to `path` by the rules above (the same checks, minus the inputs). The error
// names the path and the reason; on any error what was at the path is untouched.
Status write_output_file(const std::string& path, const std::string& content, bool force);
// The same for a text given in pieces, written in order (no joined copy of a large output).
Status write_output_file(const std::string& path, const std::vector<std::string_view>& pieces, bool force);

}  // namespace planck::core
