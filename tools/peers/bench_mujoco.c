/* MuJoCo 4.0.0's side of the comparison in the book's Performance chapter. Links the pip wheel's
 * prebuilt libmujoco (tools/peers/build.sh).
 *
 *   bench_mujoco MODEL.xml [--label NAME] [--repeats R] [--target-ms T] [--seed S] [--fns F1,F2,..]
 *   bench_mujoco MODEL.xml --state FILE --constrained [--label NAME] [--repeats R] [--target-ms T]
 *
 * State: qpos = qpos0 moved by a velocity u ~ U(-1, 1)^nv for unit time (mj_integratePos),
 * qvel ~ U(-1, 1)^nv, then one mj_forward, so that every stage below finds its inputs.
 * Prints one JSON line; the timed functions (median ns per call):
 *   factorM   mj_factorM: M = L^T D L in d->qLD
 *   solveM    mj_solveM with one right-hand side
 *   smooth    mj_kinematics, mj_comPos, mj_comVel, mj_crb, mj_factorM, mj_rne(flg_acc = 0):
 *             the smooth dynamics that mbd's mujoco module implements
 *   forward   mj_forward (the whole pipeline; finds no contacts or constraints in these models)
 *
 * --fns times only the named functions of this list (`compare.py --slopes` leaves out `forward`,
 * which on a 1,023-link chain takes a tenth of a second per call and says nothing the others do not).
 *
 * With --state FILE (nq numbers of qpos, then nv of qvel, whitespace-separated) the state is read
 * instead of drawn. With --constrained only mj_forward is timed, once per solver and cone, as
 * forward_<solver>_<cone> (newton, cg, pgs; pyramidal, elliptic), with the model's tolerance and
 * iterations and the warm start disabled (every call repeats the same state, so a warm start
 * would start at the answer; mbd's solvers start cold); "niter" gives each setting's
 * solver_niter. */
#include <mujoco/mujoco.h>
#include <stdint.h>
#include <string.h>

#include "timing.h"

typedef struct {
  const mjModel* m;
  mjData* d;
  mjtNum* x;
  mjtNum* b;
} Ctx;

static void f_factor(void* p) { Ctx* c = p; mj_factorM(c->m, c->d); }
static void f_solve(void* p) { Ctx* c = p; mj_solveM(c->m, c->d, c->x, c->b, 1); }
static void f_smooth(void* p) {
  Ctx* c = p;
  mj_kinematics(c->m, c->d);
  mj_comPos(c->m, c->d);
  mj_comVel(c->m, c->d);
  mj_crb(c->m, c->d);
  mj_factorM(c->m, c->d);
  mj_rne(c->m, c->d, 0, c->x);
}
static void f_forward(void* p) { Ctx* c = p; mj_forward(c->m, c->d); }

/* Reads n numbers into x; returns the count read. */
static int read_numbers(FILE* f, mjtNum* x, int n) {
  int k = 0;
  while (k < n && fscanf(f, "%lf", &x[k]) == 1) k++;
  return k;
}

/* Whether NAME is one of the comma-separated names of LIST. */
static int in_list(const char* list, const char* name) {
  size_t n = strlen(name);
  for (const char* p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
    if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == '\0')) return 1;
  return 0;
}

static uint64_t rng = 0x853c49e6748fea9bull;
static double uniform(void) { /* xorshift64*, mapped to [-1, 1) */
  rng ^= rng >> 12; rng ^= rng << 25; rng ^= rng >> 27;
  return (double)((rng * 2685821657736338717ull) >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL.xml [--label NAME] [--repeats R] [--target-ms T] [--seed S]\n", argv[0]);
    return 2;
  }
  const char* label = argv[1];
  int repeats = 11;
  double target_ms = 20.0;
  const char* state = NULL;
  const char* fns = "factorM,solveM,smooth,forward";
  int constrained = 0;
  for (int i = 2; i < argc; i += 2) {
    if (!strcmp(argv[i], "--constrained")) { constrained = 1; i--; continue; }
    if (i + 1 >= argc) { fprintf(stderr, "%s needs a value\n", argv[i]); return 2; }
    if (!strcmp(argv[i], "--label")) label = argv[i + 1];
    else if (!strcmp(argv[i], "--state")) state = argv[i + 1];
    else if (!strcmp(argv[i], "--fns")) fns = argv[i + 1];
    else if (!strcmp(argv[i], "--repeats")) repeats = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--target-ms")) target_ms = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--seed")) rng += (uint64_t)atoll(argv[i + 1]);
    else { fprintf(stderr, "unknown argument %s\n", argv[i]); return 2; }
  }
  char err[1000] = "";
  mjModel* m = mj_loadXML(argv[1], NULL, err, sizeof(err));
  if (!m) { fprintf(stderr, "cannot load %s: %s\n", argv[1], err); return 1; }
  mjData* d = mj_makeData(m);
  mjtNum* u = calloc((size_t)m->nv, sizeof(mjtNum));
  Ctx c = {m, d, calloc((size_t)m->nv, sizeof(mjtNum)), calloc((size_t)m->nv, sizeof(mjtNum))};
  for (int i = 0; i < m->nv; i++) { u[i] = uniform(); d->qvel[i] = uniform(); c.b[i] = uniform(); }
  mju_copy(d->qpos, m->qpos0, m->nq);
  mj_integratePos(m, d->qpos, u, 1.0);
  if (state) {
    FILE* f = fopen(state, "r");
    if (!f) { fprintf(stderr, "cannot open %s\n", state); return 1; }
    int ok = read_numbers(f, d->qpos, m->nq) == m->nq && read_numbers(f, d->qvel, m->nv) == m->nv;
    fclose(f);
    if (!ok) { fprintf(stderr, "%s: expected %d + %d numbers\n", state, (int)m->nq, (int)m->nv); return 1; }
  }
  mj_forward(m, d);
  if (constrained) {
    const char* solvers[3] = {"newton", "cg", "pgs"};
    const int solver_id[3] = {mjSOL_NEWTON, mjSOL_CG, mjSOL_PGS};
    const char* cones[2] = {"pyramidal", "elliptic"};
    const int cone_id[2] = {mjCONE_PYRAMIDAL, mjCONE_ELLIPTIC};
    m->opt.disableflags |= mjDSBL_WARMSTART;
    int niter[6];
    printf("{\"engine\":\"mujoco\",\"version\":\"%s\",\"label\":\"%s\",\"nv\":%d,\"fn\":{", mj_versionString(),
           label, (int)m->nv);
    for (int s = 0; s < 3; s++) {
      for (int k = 0; k < 2; k++) {
        char name[64];
        m->opt.solver = solver_id[s];
        m->opt.cone = cone_id[k];
        mj_forward(m, d);
        niter[2 * s + k] = d->solver_niter[0];
        snprintf(name, sizeof(name), "forward_%s_%s", solvers[s], cones[k]);
        peers_time(name, f_forward, &c, repeats, target_ms, s == 0 && k == 0);
      }
    }
    printf("},\"niter\":{");
    for (int s = 0; s < 3; s++)
      for (int k = 0; k < 2; k++)
        printf("%s\"%s_%s\":%d", s + k ? "," : "", solvers[s], cones[k], niter[2 * s + k]);
    printf("},\"ncon\":%d,\"nefc\":%d}\n", (int)d->ncon, (int)d->nefc);
    free(u); free(c.x); free(c.b);
    mj_deleteData(d);
    mj_deleteModel(m);
    return 0;
  }
  printf("{\"engine\":\"mujoco\",\"version\":\"%s\",\"label\":\"%s\",\"nv\":%d,\"fn\":{", mj_versionString(), label,
         (int)m->nv);
  const char* names[4] = {"factorM", "solveM", "smooth", "forward"};
  void (*calls[4])(void*) = {f_factor, f_solve, f_smooth, f_forward};
  int first = 1;
  for (int k = 0; k < 4; k++) {
    if (!in_list(fns, names[k])) continue;
    peers_time(names[k], calls[k], &c, repeats, target_ms, first);
    first = 0;
  }
  printf("}}\n");
  free(u); free(c.x); free(c.b);
  mj_deleteData(d);
  mj_deleteModel(m);
  return 0;
}
