/* MuJoCo 4.0's side of the constrained-forward instruction counts in the chapter "The
 * constrained pipeline": loads MODEL.xml, reads the state (nq numbers of qpos, then nv of qvel),
 * sets the solver (newton, cg, pgs) and cone (pyramidal, elliptic), disables the warm start (as
 * tools/peers/bench_mujoco.c does: every call repeats one state), runs one mj_forward, then N
 * more. Built and run under callgrind by tools/callgrind/constrained.py; the count at N calls
 * minus the count at 0, over N, is the cost of one call.
 *
 *   mj_forward MODEL.xml STATE SOLVER CONE N */
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  if (argc < 6) { fprintf(stderr, "usage: %s MODEL.xml STATE SOLVER CONE N\n", argv[0]); return 2; }
  char err[1000] = "";
  mjModel* m = mj_loadXML(argv[1], NULL, err, sizeof(err));
  if (!m) { fprintf(stderr, "cannot load %s: %s\n", argv[1], err); return 1; }
  mjData* d = mj_makeData(m);
  FILE* f = fopen(argv[2], "r");
  if (!f) { fprintf(stderr, "cannot open %s\n", argv[2]); return 1; }
  int ok = 1;
  for (int i = 0; i < m->nq && ok; i++) ok = fscanf(f, "%lf", &d->qpos[i]) == 1;
  for (int i = 0; i < m->nv && ok; i++) ok = fscanf(f, "%lf", &d->qvel[i]) == 1;
  fclose(f);
  if (!ok) { fprintf(stderr, "%s: expected %d + %d numbers\n", argv[2], (int)m->nq, (int)m->nv); return 1; }
  if (!strcmp(argv[3], "newton")) m->opt.solver = mjSOL_NEWTON;
  else if (!strcmp(argv[3], "cg")) m->opt.solver = mjSOL_CG;
  else if (!strcmp(argv[3], "pgs")) m->opt.solver = mjSOL_PGS;
  else { fprintf(stderr, "unknown solver %s\n", argv[3]); return 2; }
  if (!strcmp(argv[4], "pyramidal")) m->opt.cone = mjCONE_PYRAMIDAL;
  else if (!strcmp(argv[4], "elliptic")) m->opt.cone = mjCONE_ELLIPTIC;
  else { fprintf(stderr, "unknown cone %s\n", argv[4]); return 2; }
  m->opt.disableflags |= mjDSBL_WARMSTART;
  mj_forward(m, d);
  int n = atoi(argv[5]);
  for (int i = 0; i < n; i++) mj_forward(m, d);
  fprintf(stderr, "%d iterations, nefc %d\n", d->solver_niter[0], (int)d->nefc);
  mj_deleteData(d);
  mj_deleteModel(m);
  return 0;
}
