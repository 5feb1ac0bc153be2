// Every file laptime writes (analyze's --json/--perfetto/--svg/--roofline-svg, diff's --json and
// --svg, bench's --json/--trace/--output, forward's -o, peak's cache, the bench's layer costs) goes
// through OutputFile, so that no output can destroy an input, write into someone else's file or
// leave a half-written file behind:
//   - an output that is the same file as an input (device + inode, links followed) is refused,
//     and so are two outputs on one name;
//   - an existing path that is not a regular file (a device such as /dev/null or /dev/full,
//     a FIFO, a folder, a socket) is never replaced;
//   - a symbolic link at the output path is replaced by the new file, never written through:
//     the link, not what it points to, is the output. A link planted in a shared folder (/tmp)
//     can therefore not direct laptime into another owner's file (the kernel's
//     protected_symlinks rule only guards links the kernel follows; laptime follows none);
//   - the bytes go to a temporary beside the target, ".NAME.laptime-PID.tmp" (a shortened NAME
//     and a hash when the full one would pass the folder's file-name limit), created and renamed
//     through one descriptor of the folder; every write and the close are checked, and only a
//     complete file is renamed onto the target;
//   - errors name the user's path, never the temporary;
//   - temporaries left by a run that was killed (their PID no longer exists) are removed
//     the next time the same output is written.
// "-" means standard output where the caller allows it (JSON reports): the file is then
// the only thing on standard output, and what the command prints goes to standard error.
// An empty path means "not asked for" here; a command line refuses `--json ''` itself
// (cli::add_output_file).
//
// weights/convert.py, which runs where no laptime build is, mirrors these rules for its one
// output; tests/fixtures/output_rules.json holds both to the same cases and the same sentences.
//
// Host-only (no CUDA), in its own library laptime_host, so that trace/ can use it without
// depending on the rest of core/ (docs/DESIGN-NOTES.md, "Outputs").
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace laptime {

// A file that cannot or must not be written. what() is one sentence naming the user's path.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct OutputSpec {
  std::string what;        // for messages: "JSON report", "Perfetto trace", ...
  std::string path;        // as the user gave it; empty = not asked for (skipped)
  bool stdout_ok = false;  // "-" means standard output
};

// Before any long work: every output asked for is "-" (where allowed) or a path whose folder
// exists and can be written, whose name fits the folder's limit, that is not an existing
// non-regular file, not the same file as any input, and not the same name as another output.
// Throws OutputError with one sentence.
void check_outputs(const std::vector<OutputSpec>& outputs, const std::vector<std::string>& inputs);

// One output being written. Construction runs check_outputs for it, removes stale
// temporaries of the same target and creates the temporary; the destructor removes the
// temporary unless commit() succeeded.
class OutputFile {
 public:
  explicit OutputFile(const OutputSpec& spec, const std::vector<std::string>& inputs = {});
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // The temporary, for writers that open a path themselves (SQLite). Not for standard output.
  const std::string& temp_path() const { return temp_; }
  const std::string& path() const { return spec_.path; }

  void write(std::string_view bytes);
  // Flushes, syncs and closes the temporary, then renames it onto the target.
  void commit();

 private:
  void fail(const std::string& reason) const;
  OutputSpec spec_;
  std::string name_;       // the last component of the path: what the rename replaces
  std::string temp_name_;  // the temporary's name in the same folder
  std::string temp_;       // folder + temp_name_, for temp_path()
  int dir_fd_ = -1;        // the output's folder: the temporary is made and renamed through it
  int fd_ = -1;
  int saved_stdout_ = -1;  // for "-": standard output before it was pointed at standard error
  bool to_stdout_ = false;
  bool committed_ = false;
};

// Descriptors 0, 1 and 2 that are closed (`laptime ... >&-`) are opened on /dev/null, in the
// mode that makes every use fail (standard output and error read-only, standard input
// write-only; as gnulib's stdopen does). Without it the next open() gets descriptor 1, an
// output's temporary becomes standard output, and the text report lands inside the JSON.
// Call once at the start of main(); writes to a closed standard output then fail with EBADF
// and are reported, as before.
void reserve_standard_descriptors();

// "" for a regular file or a path that does not exist; else what it is, for a sentence:
// "a FIFO (named pipe)", "a character device", "a folder", ... (links followed)
std::string non_regular_kind(const std::string& path);

// ".NAME.laptime-PID.tmp" in the folder of path: the temporary a process writes for it. When
// that name would pass the folder's file-name limit, NAME is cut (at a UTF-8 boundary) and
// followed by "~" and 16 hex digits of a hash of the whole name, so two long outputs sharing a
// prefix never share a temporary.
std::string temporary_for(const std::string& path, long pid);
// The same name for an output named `name` in a folder whose names hold at most name_max bytes.
std::string temporary_name(const std::string& name, long name_max, long pid);

// Removes the temporaries of path whose process no longer exists; returns how many.
int remove_stale_temporaries(const std::string& path);

}  // namespace laptime
