/* The timing rule shared by the two peer drivers and by mbd's benchmark in peer mode
 * (benches/common/peers_timing.rs): double the number n of back-to-back calls until a batch takes at least
 * half of TARGET_MS, scale n to about TARGET_MS, then time REPEATS batches of n calls and report
 * the median, smallest and largest time per call. */
#ifndef MBD_PEERS_TIMING_H
#define MBD_PEERS_TIMING_H
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double peers_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return 1e9 * (double)t.tv_sec + (double)t.tv_nsec;
}

static int peers_cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* Times call(ctx) and prints `"NAME":{"median_ns":..,"min_ns":..,"max_ns":..}` (with a leading
 * comma unless first). */
static void peers_time(const char* name, void (*call)(void*), void* ctx, int repeats, double target_ms,
                       int first) {
  long n = 1;
  for (;;) {
    double t0 = peers_now_ns();
    for (long i = 0; i < n; i++) call(ctx);
    double dt = peers_now_ns() - t0;
    if (dt > 0.5e6 * target_ms || n > (1L << 30)) {
      double scaled = (double)n * target_ms * 1e6 / (dt > 1.0 ? dt : 1.0);
      n = scaled < 1.0 ? 1 : (long)scaled;
      break;
    }
    n *= 2;
  }
  double* s = (double*)malloc(sizeof(double) * (size_t)repeats);
  for (int r = 0; r < repeats; r++) {
    double t0 = peers_now_ns();
    for (long i = 0; i < n; i++) call(ctx);
    s[r] = (peers_now_ns() - t0) / (double)n;
  }
  qsort(s, (size_t)repeats, sizeof(double), peers_cmp);
  double med = repeats % 2 ? s[repeats / 2] : 0.5 * (s[repeats / 2 - 1] + s[repeats / 2]);
  printf("%s\"%s\":{\"median_ns\":%.1f,\"min_ns\":%.1f,\"max_ns\":%.1f}", first ? "" : ",", name, med, s[0],
         s[repeats - 1]);
  free(s);
}
#endif
