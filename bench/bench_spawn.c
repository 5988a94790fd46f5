/* bench_spawn - whole-process wall time of a command: runs it N times
 * (stdout to /dev/null, stderr kept) and prints the median, the minimum
 * and the maximum in ms.  The time runs from just before posix_spawn to
 * the reaped exit, so it holds the loader, the libraries' start-up and the
 * exit, but no shell.
 *
 *   bench_spawn N COMMAND [ARG...] */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_clock.h"

extern char **environ;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_spawn N COMMAND [ARG...]\n");
        return 2;
    }
    int n = atoi(argv[1]);
    if (n < 1 || n > 10000) {
        fprintf(stderr, "bench_spawn: N must be 1 to 10000\n");
        return 2;
    }
    double *t = malloc((size_t)n * sizeof *t);
    if (t == NULL)
        return 1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    for (int i = 0; i < n; i++) {
        pid_t pid;
        int status;
        double t0 = now_s();
        if (posix_spawnp(&pid, argv[2], &fa, NULL, argv + 2, environ) != 0) {
            perror("bench_spawn: posix_spawnp");
            return 1;
        }
        if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "bench_spawn: %s did not exit with 0\n", argv[2]);
            return 1;
        }
        t[i] = (now_s() - t0) * 1e3;
    }
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    printf("median %.2f ms (min %.2f, max %.2f) over %d runs\n", t[n / 2], t[0], t[n - 1], n);
    posix_spawn_file_actions_destroy(&fa);
    free(t);
    return 0;
}
