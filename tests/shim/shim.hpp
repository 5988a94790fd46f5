// shim.hpp - helpers the C++ tests share: temporary directories, files,
// and running a program (the oomsim binary, python3) with its stdout,
// stderr and exit status captured.  The C API itself is reached through
// the project's headers, whose extern "C" guards make them the C shim.
#ifndef OOMSIM_TEST_SHIM_HPP
#define OOMSIM_TEST_SHIM_HPP

#include <fcntl.h>
#include <dirent.h>
#include <ftw.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

extern char **environ;

namespace shim {

inline std::string read_file(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error("cannot read " + path);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

inline void write_file(const std::string &path, const std::string &data)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!out)
        throw std::runtime_error("cannot write " + path);
}

inline bool exists(const std::string &path)
{
    struct stat st;
    return ::stat(path.c_str(), &st) == 0;
}

// A fresh directory under $TMPDIR (or /tmp), removed with its contents.
class TempDir {
public:
    TempDir()
    {
        const char *base = std::getenv("TMPDIR");
        std::string tmpl = std::string(base != nullptr ? base : "/tmp") + "/oomsim-test-XXXXXX";
        std::vector<char> buf(tmpl.begin(), tmpl.end());
        buf.push_back('\0');
        if (::mkdtemp(buf.data()) == nullptr)
            throw std::runtime_error("mkdtemp failed");
        path_ = buf.data();
    }
    ~TempDir()
    {
        ::nftw(
            path_.c_str(),
            [](const char *p, const struct stat *, int, struct FTW *) { return ::remove(p); },
            16, FTW_DEPTH | FTW_PHYS);
    }
    TempDir(const TempDir &) = delete;
    TempDir &operator=(const TempDir &) = delete;

    const std::string &path() const { return path_; }
    std::string file(const std::string &name) const { return path_ + "/" + name; }
    // Writes data to name inside the directory and returns the full path.
    std::string write(const std::string &name, const std::string &data) const
    {
        write_file(file(name), data);
        return file(name);
    }

private:
    std::string path_;
};

struct RunResult {
    int status = -1; // exit status, or 128 + signal number
    int signal = 0;  // the signal that ended it, 0 when it exited
    std::string out;
    std::string err;
};

// The words of OOMSIM_TEST_WRAPPER (split at spaces), which run the oomsim
// binary when set: the memcheck label sets it to valgrind and its options.
inline std::vector<std::string> wrapper_of(const std::string &program)
{
    std::vector<std::string> words;
    const char *w = std::getenv("OOMSIM_TEST_WRAPPER");
    size_t slash = program.rfind('/');
    if (w == nullptr || program.substr(slash == std::string::npos ? 0 : slash + 1) != "oomsim")
        return words;
    std::istringstream in(w);
    for (std::string word; in >> word;)
        words.push_back(word);
    return words;
}

// Runs argv[0] (a path) with the given arguments, stdin from /dev/null,
// stdout and stderr captured through files in a temporary directory.
inline RunResult run(const std::vector<std::string> &given,
                     const std::function<void(pid_t)> &during = nullptr)
{
    std::vector<std::string> argv = wrapper_of(given.at(0));
    argv.insert(argv.end(), given.begin(), given.end());
    TempDir dir;
    std::string out_path = dir.file("stdout"), err_path = dir.file("stderr");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
    posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
    std::vector<char *> args;
    for (const auto &a : argv)
        args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid;
    int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
    if (during)
        during(pid);
    int wstatus = 0;
    while (::waitpid(pid, &wstatus, 0) < 0) {
        if (errno != EINTR)
            throw std::runtime_error("waitpid failed");
    }
    RunResult r;
    if (WIFEXITED(wstatus))
        r.status = WEXITSTATUS(wstatus);
    else if (WIFSIGNALED(wstatus))
        r.status = 128 + (r.signal = WTERMSIG(wstatus));
    r.out = read_file(out_path);
    r.err = read_file(err_path);
    return r;
}

// Runs the oomsim binary built with the tests.
inline RunResult oomsim(const std::vector<std::string> &args)
{
    std::vector<std::string> argv{OOMSIM_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
}

inline std::string source_path(const std::string &rel)
{
    return std::string(OOMSIM_SOURCE_DIR) + "/" + rel;
}

struct Entry {
    std::string path; // full path
    std::string stem; // file name without its extension
};

// The names of the files of a folder (not those starting with '.'), sorted.
inline std::vector<std::string> file_names(const std::string &dir)
{
    std::vector<std::string> out;
    DIR *d = ::opendir(dir.c_str());
    if (d == nullptr)
        throw std::runtime_error("cannot list " + dir);
    while (struct dirent *e = ::readdir(d))
        if (e->d_name[0] != '.')
            out.push_back(e->d_name);
    ::closedir(d);
    std::sort(out.begin(), out.end());
    return out;
}

// The regular .yaml files of a source folder, sorted by name.
inline std::vector<Entry> yaml_files(const std::string &rel)
{
    std::string dir = source_path(rel);
    std::vector<Entry> out;
    const std::string ext = ".yaml";
    for (const std::string &name : file_names(dir))
        if (name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0)
            out.push_back({dir + "/" + name, name.substr(0, name.size() - ext.size())});
    return out;
}

} // namespace shim

#endif
