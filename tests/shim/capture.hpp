// capture.hpp - for the failure sweeps (test_alloc_sweep.cpp,
// test_io_sweep.cpp), which run subcommands in-process: their stdout and
// stderr captured, and a directory's files compared and removed.
#ifndef OOMSIM_TEST_CAPTURE_HPP
#define OOMSIM_TEST_CAPTURE_HPP

#include "shim/shim.hpp"

namespace shim {

// stdout and stderr of the code under test, into files.
class Capture {
public:
    explicit Capture(const TempDir &dir)
        : out_(open_file(dir.file("stdout"))), err_(open_file(dir.file("stderr")))
    {
    }
    ~Capture()
    {
        ::close(out_);
        ::close(err_);
    }
    void begin()
    {
        std::fflush(stdout);
        std::fflush(stderr);
        saved_out_ = ::dup(1);
        saved_err_ = ::dup(2);
        if (::ftruncate(out_, 0) != 0 || ::ftruncate(err_, 0) != 0)
            throw std::runtime_error("ftruncate");
        ::lseek(out_, 0, SEEK_SET);
        ::lseek(err_, 0, SEEK_SET);
        ::dup2(out_, 1);
        ::dup2(err_, 2);
    }
    // Restores stdout and stderr; what was written to each.
    std::pair<std::string, std::string> end()
    {
        std::fflush(stdout);
        std::fflush(stderr);
        ::dup2(saved_out_, 1);
        ::dup2(saved_err_, 2);
        ::close(saved_out_);
        ::close(saved_err_);
        return {slurp(out_), slurp(err_)};
    }

private:
    static int open_file(const std::string &path)
    {
        int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (fd < 0)
            throw std::runtime_error("cannot open " + path);
        return fd;
    }
    static std::string slurp(int fd)
    {
        std::string text;
        char buf[4096];
        ::lseek(fd, 0, SEEK_SET);
        ssize_t n;
        while ((n = ::read(fd, buf, sizeof buf)) > 0)
            text.append(buf, static_cast<size_t>(n));
        return text;
    }
    int out_, err_, saved_out_ = -1, saved_err_ = -1;
};

// The names in a directory but "." and "..", sorted (none when there is
// no directory).
inline std::vector<std::string> entries(const std::string &dir)
{
    std::vector<std::string> names;
    if (DIR *d = ::opendir(dir.c_str())) {
        while (struct dirent *e = ::readdir(d))
            if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
                names.push_back(e->d_name);
        ::closedir(d);
    }
    std::sort(names.begin(), names.end());
    return names;
}

inline bool is_dir(const std::string &path)
{
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// A directory's files and their bytes, its subdirectories' too ("" when
// there is no directory).
inline std::string listing(const std::string &dir)
{
    std::string all;
    for (auto &n : entries(dir)) {
        std::string path = dir + "/" + n;
        all += is_dir(path) ? n + "/\n" + listing(path) : n + "\n" + read_file(path) + "\n";
    }
    return all;
}

// Removes what a directory holds, subdirectories too.
inline void empty_dir(const std::string &dir)
{
    for (auto &n : entries(dir)) {
        std::string path = dir + "/" + n;
        if (is_dir(path)) {
            empty_dir(path);
            ::rmdir(path.c_str());
        } else {
            ::unlink(path.c_str());
        }
    }
}

inline void remove_dir(const std::string &dir)
{
    empty_dir(dir);
    ::rmdir(dir.c_str());
}

// A short version of a teaching scenario (20 s of requests instead of 4
// min), written into dir, so that sweeping every failure of a run stays
// quick.
inline std::string short_scenario(const TempDir &dir)
{
    std::string text = read_file(std::string(OOMSIM_SOURCE_DIR) +
                                 "/scenarios/catalog/teach/timeout-retry-storm.yaml");
    for (auto [from, to] : {std::pair<std::string, std::string>{"horizon: 5min", "horizon: 40s"},
                            {"for: 4min", "for: 20s"}}) {
        size_t at = text.find(from);
        if (at == std::string::npos)
            throw std::runtime_error("the teaching scenario changed: no " + from);
        text.replace(at, from.size(), to);
    }
    std::string path = dir.file("short.yaml");
    write_file(path, text);
    return path;
}

} // namespace shim

#endif
