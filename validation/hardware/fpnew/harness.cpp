// SFV1 harness around a Verilated FPnew (fpnew_top, RV64D_Xsflt, DEFAULT_NOREGS).
//
// Speaks the SFV1 protocol on stdin/stdout: one header line
//   SFV1 <op> <fmt> <rounding> <n_operands> <in_bytes> <out_bytes> [key=value ...]
// answered by "OK" or "ERR <reason>", then batches (uint32 N, N cases of operands,
// case-major, little-endian) answered by N results and N flag bytes. N = 0 ends.
//
// Add, mul, fma, the non-computational and conversion units are combinational in this
// configuration: one evaluation of the model per case, no clock. Div/sqrt are iterative:
// the case is issued, the clock runs until out_valid, the result is taken.
// SFV1_STATS=1 in the environment prints cases, cycles and ops/s on stderr at the end.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "Vsfv1_top.h"
#include "verilated.h"

#ifndef DIVSQRT_NAME
#define DIVSQRT_NAME "unknown"
#endif

namespace {

enum FpFmt { FP32 = 0, FP64 = 1, FP16 = 2, FP8 = 3, FP16ALT = 4 };
enum IntFmt { INT8 = 0, INT16 = 1, INT32 = 2, INT64 = 3 };
enum Op { FMADD = 0, FNMSUB = 1, ADD = 2, MUL = 3, DIV = 4, SQRT = 5, SGNJ = 6,
          MINMAX = 7, CMP = 8, CLASSIFY = 9, F2F = 10, F2I = 11, I2F = 12 };
enum Kind { FLOAT_IN = 0, INT_IN = 1 };

struct FmtInfo { const char* name; int code; int width; };
const FmtInfo kFormats[] = {
    {"fp32", FP32, 32}, {"fp64", FP64, 64}, {"fp16", FP16, 16},
    {"fp8_e5m2", FP8, 8}, {"bf16", FP16ALT, 16},
};

struct ModeInfo { const char* name; int code; };
const ModeInfo kModes[] = {
    {"nearest_even", 0}, {"toward_zero", 1}, {"downward", 2}, {"upward", 3},
    {"nearest_away", 4}, {"odd", 5},
};

// One SFV1 operation as FPnew sees it: opcode, op_mod, a fixed rounding-mode field
// (-1: the header's mode; the non-computational ops use it as a sub-opcode), which
// input feeds each of FPnew's three operand slots (-1: unused), and the result kind.
struct OpInfo {
  const char* name; int n_in; int op; int mod; int rnd; int slot[3];
  bool int_in; bool int_out; int result_bits;  // result_bits 0: the format's width
};
const OpInfo kOps[] = {
    {"add",            2, ADD,      0, -1, {-1, 0, 1}, false, false, 0},
    {"sub",            2, ADD,      1, -1, {-1, 0, 1}, false, false, 0},
    {"mul",            2, MUL,      0, -1, {0, 1, -1}, false, false, 0},
    {"div",            2, DIV,      0, -1, {0, 1, -1}, false, false, 0},
    {"sqrt",           1, SQRT,     0, -1, {0, -1, -1}, false, false, 0},
    {"fma",            3, FMADD,    0, -1, {0, 1, 2}, false, false, 0},   // fmadd  a*b + c
    {"fms",            3, FMADD,    1, -1, {0, 1, 2}, false, false, 0},   // fmsub  a*b - c
    {"fnma",           3, FNMSUB,   0, -1, {0, 1, 2}, false, false, 0},   // fnmsub -(a*b) + c
    {"fnms",           3, FNMSUB,   1, -1, {0, 1, 2}, false, false, 0},   // fnmadd -(a*b) - c
    {"fmin_riscv",     2, MINMAX,   0,  0, {0, 1, -1}, false, false, 0},  // fmin
    {"fmax_riscv",     2, MINMAX,   0,  1, {0, 1, -1}, false, false, 0},  // fmax
    {"minimum_number", 2, MINMAX,   0,  0, {0, 1, -1}, false, false, 0},  // fmin
    {"maximum_number", 2, MINMAX,   0,  1, {0, 1, -1}, false, false, 0},  // fmax
    {"le_signaling",   2, CMP,      0,  0, {0, 1, -1}, false, true, 1},   // fle
    {"lt_signaling",   2, CMP,      0,  1, {0, 1, -1}, false, true, 1},   // flt
    {"eq",             2, CMP,      0,  2, {0, 1, -1}, false, true, 1},   // feq
    {"ge_signaling",   2, CMP,      0,  0, {1, 0, -1}, false, true, 1},   // fle b, a
    {"gt_signaling",   2, CMP,      0,  1, {1, 0, -1}, false, true, 1},   // flt b, a
    {"ne",             2, CMP,      1,  2, {0, 1, -1}, false, true, 1},   // feq, inverted (op_mod)
    {"classify",       1, CLASSIFY, 0,  0, {0, -1, -1}, false, true, 10}, // fclass
    {"to_int32",       1, F2I,      0, -1, {0, -1, -1}, false, true, 32}, // fcvt.w
    {"to_int64",       1, F2I,      0, -1, {0, -1, -1}, false, true, 64}, // fcvt.l
    {"to_uint32",      1, F2I,      1, -1, {0, -1, -1}, false, true, 32}, // fcvt.wu
    {"to_uint64",      1, F2I,      1, -1, {0, -1, -1}, false, true, 64}, // fcvt.lu
    {"from_int32",     1, I2F,      0, -1, {0, -1, -1}, true, false, 0},  // fcvt.*.w
    {"from_int64",     1, I2F,      0, -1, {0, -1, -1}, true, false, 0},  // fcvt.*.l
    {"from_uint32",    1, I2F,      1, -1, {0, -1, -1}, true, false, 0},  // fcvt.*.wu
    {"from_uint64",    1, I2F,      1, -1, {0, -1, -1}, true, false, 0},  // fcvt.*.lu
    {"convert",        1, F2F,      0, -1, {0, -1, -1}, false, false, 0}, // fcvt.*.* (convert:<dst>)
};

const FmtInfo* find_fmt(const std::string& s) {
  for (const auto& f : kFormats) if (s == f.name) return &f;
  return nullptr;
}

struct Sim {
  VerilatedContext ctx;
  Vsfv1_top* top;
  uint64_t cycles = 0;
  Sim() { top = new Vsfv1_top{&ctx}; }
  ~Sim() { top->final(); delete top; }
  void tick() {
    top->clk_i = 1; top->eval();
    top->clk_i = 0; top->eval();
    ++cycles;
  }
  void reset() {
    top->clk_i = 0; top->rst_ni = 0; top->in_valid_i = 0; top->out_ready_i = 1;
    top->eval();
    for (int i = 0; i < 4; ++i) tick();
    top->rst_ni = 1; top->eval();
    for (int i = 0; i < 2; ++i) tick();
  }
};

bool read_exact(void* p, size_t n) {
  return std::fread(p, 1, n, stdin) == n;
}

uint64_t load_le(const uint8_t* p, int nbytes) {
  uint64_t v = 0;
  for (int i = nbytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

void store_le(uint8_t* p, uint64_t v, int nbytes) {
  for (int i = 0; i < nbytes; ++i) { p[i] = uint8_t(v); v >>= 8; }
}

int fail(const std::string& why) {
  std::printf("ERR %s\n", why.c_str());
  std::fflush(stdout);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  char line[4096];
  if (!std::fgets(line, sizeof line, stdin)) return 2;
  std::vector<std::string> tok;
  for (char* t = std::strtok(line, " \t\r\n"); t; t = std::strtok(nullptr, " \t\r\n"))
    tok.emplace_back(t);
  if (tok.size() < 7 || tok[0] != "SFV1") return fail("expected an SFV1 header line");
  const std::string opname = tok[1], fmtname = tok[2], mode = tok[3];
  const int n_ops = std::atoi(tok[4].c_str()), in_bytes = std::atoi(tok[5].c_str()),
            out_bytes = std::atoi(tok[6].c_str());

  const OpInfo* op = nullptr;
  const size_t colon = opname.find(':');
  const std::string base = opname.substr(0, colon);
  for (const auto& o : kOps) if (base == o.name && (colon == std::string::npos) == (o.op != F2F)) op = &o;
  if (!op) return fail("operation '" + opname + "' is not implemented by this FPnew harness");
  const FmtInfo* fmt = find_fmt(fmtname);
  if (!fmt) return fail("format '" + fmtname + "' is not one of FPnew's (fp32 fp64 fp16 bf16 fp8_e5m2)");
  int rnd = -1;
  for (const auto& m : kModes) if (mode == m.name) rnd = m.code;
  if (rnd < 0) return fail("rounding '" + mode + "' is not one of FPnew's six modes");
  if (n_ops != op->n_in) return fail(opname + " takes " + std::to_string(op->n_in) + " operand(s)");

  // Conversions: the header's format is the source for float -> int and float -> float
  // (convert:<dst> names the destination), the destination for int -> float.
  const FmtInfo* src = fmt;
  const FmtInfo* dst = fmt;
  int int_fmt = INT32;
  if (op->op == F2F) {
    dst = find_fmt(opname.substr(colon + 1));
    if (!dst) return fail("destination format of '" + opname + "' is not one of FPnew's");
  }
  for (size_t i = 7; i < tok.size(); ++i) {
    const std::string kv = tok[i];
    const size_t eq = kv.find('=');
    const std::string k = kv.substr(0, eq), v = eq == std::string::npos ? "" : kv.substr(eq + 1);
    if (((k == "ftz" || k == "daz") && v == "0") || (k == "tininess" && v == "after") ||
        (k == "nan" && v == "canonical")) {
      // what FPnew does: gradual underflow, tininess after rounding, RISC-V's canonical NaN
    } else {
      return fail("policy '" + kv + "' is not supported (FPnew has no such mode)");
    }
  }
  const int res_bits = op->op == F2F ? dst->width
                       : op->op == I2F ? fmt->width
                       : op->result_bits ? op->result_bits : fmt->width;
  const int want_in = op->int_in ? in_bytes : (op->op == F2F ? src->width : fmt->width) / 8;
  if (op->int_in) {
    if (in_bytes != 4 && in_bytes != 8) return fail(opname + " takes 4- or 8-byte integers");
    int_fmt = in_bytes == 4 ? INT32 : INT64;
    if ((base.find("64") != std::string::npos) != (in_bytes == 8))
      return fail(opname + " takes " + (in_bytes == 8 ? "4" : "8") + "-byte integers");
  } else if (in_bytes != want_in) {
    return fail("operands of " + opname + " are " + std::to_string(want_in) + " byte(s) wide");
  }
  if (op->op == F2I) int_fmt = res_bits == 32 ? INT32 : INT64;
  if (out_bytes * 8 < res_bits || out_bytes > 8)
    return fail("results of " + opname + " need " + std::to_string((res_bits + 7) / 8) + " byte(s)");
  const bool divsqrt = op->op == DIV || op->op == SQRT;
  if (divsqrt && fmt->code == FP8 && std::strcmp(DIVSQRT_NAME, "thmulti") == 0)
    return fail("the THMULTI div/sqrt unit has no fp8 (build the PULP unit for fp8 div/sqrt)");

  std::printf("OK\n");
  std::fflush(stdout);

  Sim sim;
  sim.reset();
  Vsfv1_top* t = sim.top;
  t->op_i = op->op; t->op_mod_i = op->mod;
  t->rnd_mode_i = op->rnd >= 0 ? op->rnd : rnd;
  t->src_fmt_i = src->code; t->dst_fmt_i = op->op == F2F ? dst->code : fmt->code;
  t->int_fmt_i = int_fmt;
  t->out_ready_i = 1;

  const int in_w = op->int_in ? in_bytes * 8 : (op->op == F2F ? src->width : fmt->width);
  const uint64_t box = in_w >= 64 || op->int_in ? 0 : (~0ULL << in_w);
  const uint64_t res_mask = res_bits >= 64 ? ~0ULL : ((1ULL << res_bits) - 1);
  // An unused operand slot gets a NaN-boxed +0 (FPnew replaces it internally).
  const uint64_t unused = box;

  std::vector<uint8_t> in, out;
  uint64_t total = 0;
  const auto t0 = std::chrono::steady_clock::now();
  uint64_t operand[3];
  for (;;) {
    uint32_t n;
    if (!read_exact(&n, 4)) { std::fprintf(stderr, "fpnew harness: input ended without N = 0\n"); return 3; }
    if (n == 0) break;
    if (n > (1u << 20)) { std::fprintf(stderr, "fpnew harness: batch of %u cases (at most 2^20)\n", n); return 3; }
    in.resize(size_t(n) * n_ops * in_bytes);
    out.assign(size_t(n) * (out_bytes + 1), 0);
    if (!read_exact(in.data(), in.size())) { std::fprintf(stderr, "fpnew harness: short batch\n"); return 3; }
    uint8_t* res = out.data();
    uint8_t* flg = out.data() + size_t(n) * out_bytes;
    for (uint32_t c = 0; c < n; ++c) {
      const uint8_t* p = in.data() + size_t(c) * n_ops * in_bytes;
      for (int k = 0; k < n_ops; ++k) {
        uint64_t v = load_le(p + k * in_bytes, in_bytes);
        if (op->int_in && in_bytes == 4)          // an RV64 register: sign-extended word
          v = uint64_t(int64_t(int32_t(uint32_t(v))));
        operand[k] = v | box;
      }
      t->op_a_i = op->slot[0] < 0 ? unused : operand[op->slot[0]];
      t->op_b_i = op->slot[1] < 0 ? unused : operand[op->slot[1]];
      t->op_c_i = op->slot[2] < 0 ? unused : operand[op->slot[2]];
      t->in_valid_i = 1;
      t->eval();
      int guard = 0;
      while (!t->in_ready_o) {
        sim.tick();
        if (++guard > 10000) { std::fprintf(stderr, "fpnew harness: in_ready never rose\n"); return 3; }
      }
      if (!divsqrt && t->out_valid_o) {          // combinational: result in the same evaluation
        store_le(res + size_t(c) * out_bytes, t->result_o & res_mask, out_bytes);
        flg[c] = t->status_o & 0x1F;
        continue;
      }
      sim.tick();                                // the unit takes the operands on this edge
      t->in_valid_i = 0;
      t->eval();
      guard = 0;
      while (!t->out_valid_o) {
        sim.tick();
        if (++guard > 10000) { std::fprintf(stderr, "fpnew harness: out_valid never rose\n"); return 3; }
      }
      store_le(res + size_t(c) * out_bytes, t->result_o & res_mask, out_bytes);
      flg[c] = t->status_o & 0x1F;
      sim.tick();                                // the result is taken on this edge
    }
    if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size()) return 3;
    std::fflush(stdout);
    total += n;
  }
  if (std::getenv("SFV1_STATS")) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "fpnew harness (%s div/sqrt): %s %s %s: %llu cases, %llu cycles, %.3f s, %.0f ops/s\n",
                 DIVSQRT_NAME, opname.c_str(), fmtname.c_str(), mode.c_str(),
                 (unsigned long long)total, (unsigned long long)sim.cycles, s, s > 0 ? total / s : 0.0);
  }
  return 0;
}
