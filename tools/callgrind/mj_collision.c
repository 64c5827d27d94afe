/* MuJoCo 4.0's side of the collision instruction counts in the book's "Collision detection"
 * chapter: loads MODEL.xml, reads the state (nq numbers of qpos, then nv of qvel), runs one
 * mj_forward, then mj_collision N times and nothing else. Built and run under callgrind by
 * tools/callgrind/collision.py; the count at N calls minus the count at 0, over N, is the cost
 * of one call.
 *
 *   mj_collision MODEL.xml STATE N */
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  if (argc < 4) { fprintf(stderr, "usage: %s MODEL.xml STATE N\n", argv[0]); return 2; }
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
  mj_forward(m, d);
  int n = atoi(argv[3]);
  for (int i = 0; i < n; i++) mj_collision(m, d);
  fprintf(stderr, "%d contacts\n", (int)d->ncon);
  mj_deleteData(d);
  mj_deleteModel(m);
  return 0;
}
