// Pinocchio 4.1.0's side of the comparison in the book's Performance chapter: its algorithms are
// header templates, compiled here (tools/peers/build.sh) against the headers of the pip wheel;
// only the MJCF parser comes from the wheel's prebuilt library.
//
//   bench_pinocchio MODEL.xml [--label NAME] [--repeats R] [--target-ms T]
//
// State: q = integrate(neutral, u) with u ~ U(-1, 1)^nv; v, a, tau ~ U(-1, 1)^nv.
// Prints one JSON line; the timed functions (median ns per call):
//   rnea  rnea(q, v, a)       crba  crba(q) (upper triangle of M)       aba  aba(q, v, tau)
#include <cstring>
#include <random>
#include <string>

#include "pinocchio/algorithm/aba.hpp"
#include "pinocchio/algorithm/crba.hpp"
#include "pinocchio/algorithm/joint-configuration.hpp"
#include "pinocchio/algorithm/rnea.hpp"
#include "pinocchio/multibody.hpp"
#include "pinocchio/parsers/mjcf.hpp"

extern "C" {
#include "timing.h"
}

struct Ctx {
  const pinocchio::Model* model;
  pinocchio::Data* data;
  Eigen::VectorXd q, v, a, tau;
};

static void f_rnea(void* p) { auto* c = static_cast<Ctx*>(p); pinocchio::rnea(*c->model, *c->data, c->q, c->v, c->a); }
static void f_crba(void* p) { auto* c = static_cast<Ctx*>(p); pinocchio::crba(*c->model, *c->data, c->q); }
static void f_aba(void* p) { auto* c = static_cast<Ctx*>(p); pinocchio::aba(*c->model, *c->data, c->q, c->v, c->tau); }

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL.xml [--label NAME] [--repeats R] [--target-ms T]\n", argv[0]);
    return 2;
  }
  std::string label = argv[1];
  int repeats = 11;
  double target_ms = 20.0;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--label")) label = argv[i + 1];
    else if (!std::strcmp(argv[i], "--repeats")) repeats = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--target-ms")) target_ms = std::atof(argv[i + 1]);
    else { std::fprintf(stderr, "unknown argument %s\n", argv[i]); return 2; }
  }
  pinocchio::Model model;
  pinocchio::mjcf::buildModel(argv[1], model);
  pinocchio::Data data(model);
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  auto draw = [&](int n) {
    Eigen::VectorXd x(n);
    for (int i = 0; i < n; i++) x[i] = uni(gen);
    return x;
  };
  Ctx c{&model, &data, pinocchio::integrate(model, pinocchio::neutral(model), draw(model.nv)), draw(model.nv),
        draw(model.nv), draw(model.nv)};
  std::printf("{\"engine\":\"pinocchio\",\"version\":\"%s\",\"label\":\"%s\",\"nv\":%d,\"fn\":{", PINOCCHIO_VERSION,
              label.c_str(), model.nv);
  peers_time("rnea", f_rnea, &c, repeats, target_ms, 1);
  peers_time("crba", f_crba, &c, repeats, target_ms, 0);
  peers_time("aba", f_aba, &c, repeats, target_ms, 0);
  std::printf("}}\n");
  return 0;
}
