#pragma once
// The input gate for files planck opens by itself rather than by a user's naming them (the
// __init__.py beside a torchtitan registry) and for inputs that must be files (a registry):
// only a regular file is read, within a size cap as every input (core/base/input_file.h).
// Opened non-blocking, so a FIFO never stalls planck; symlinks are followed, a loop is an error.

#include <cstdint>
#include <optional>
#include <string>

#include "core/base/status.h"

namespace planck::core {

// The bytes of the regular file at `path`; nullopt when nothing is there (ENOENT). A directory,
// FIFO, device or socket, a symlink loop, an unreadable file or one over the cap is an error
// naming the path and what it is ("it is a FIFO (named pipe), not a regular file").
// At most `max_bytes`, named `what` in the refusal (core/base/input_file.h size_limit_text).
Result<std::optional<std::string>> read_regular_file(const std::string& path, std::int64_t max_bytes,
                                                     const std::string& what);

}  // namespace planck::core
