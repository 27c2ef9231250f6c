// Executor: every task of a batch runs before RunAll returns, tasks overlap, the number running
// at once is bounded, a busy executor cannot stall a batch, and a throw reaches the caller.
#include "common/executor/executor.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <latch>
#include <stdexcept>

namespace trainer::executor {
namespace {

using namespace std::chrono_literals;

TEST_CASE("every task runs before RunAll returns") {
  Executor ex(2);
  std::vector<int> done(10, 0);
  std::vector<std::function<void()>> tasks;
  for (int i = 0; i < 10; ++i) tasks.push_back([&done, i] { done[i] = i + 1; });
  ex.RunAll(tasks);
  for (int i = 0; i < 10; ++i) CHECK(done[i] == i + 1);
  std::vector<std::function<void()>> none;
  ex.RunAll(none);
}

TEST_CASE("tasks of a batch overlap: the caller and the threads wait for each other") {
  Executor ex(2);
  std::latch all_started(3);  // 2 threads + the caller, at once, or this never returns
  std::vector<std::function<void()>> tasks(3, [&] { all_started.arrive_and_wait(); });
  ex.RunAll(tasks);
}

TEST_CASE("at most `threads` tasks run on the executor, plus the caller") {
  Executor ex(2);
  std::atomic<int> running{0}, peak{0};
  std::vector<std::function<void()>> tasks(12, [&] {
    int now = ++running;
    for (int p = peak; now > p && !peak.compare_exchange_weak(p, now);) {
    }
    std::this_thread::sleep_for(2ms);
    --running;
  });
  ex.RunAll(tasks);
  CHECK(peak <= 3);
  CHECK(peak >= 2);
}

TEST_CASE("a batch finishes while every thread is busy with another") {
  Executor ex(1);
  std::atomic<bool> release{false};
  std::latch blocking(1);
  std::thread other([&] {
    // Its caller runs the first task, which waits until the executor's one thread has taken
    // the second: that thread then stays busy until `release`.
    std::vector<std::function<void()>> busy = {[&] { blocking.wait(); },
                                               [&] {
                                                 blocking.count_down();
                                                 while (!release) std::this_thread::sleep_for(1ms);
                                               }};
    ex.RunAll(busy);
  });
  blocking.wait();
  int ran = 0;
  std::vector<std::function<void()>> mine(3, [&] { ++ran; });
  ex.RunAll(mine);  // the caller runs all three itself
  CHECK(ran == 3);
  release = true;
  other.join();
}

TEST_CASE("a task that throws: the others run, RunAll rethrows") {
  Executor ex(2);
  std::atomic<int> ran{0};
  std::vector<std::function<void()>> tasks = {
      [&] { ++ran; }, [] { throw std::runtime_error("boom"); }, [&] { ++ran; }};
  CHECK_THROWS_WITH(ex.RunAll(tasks), "boom");
  CHECK(ran == 2);
}

}  // namespace
}  // namespace trainer::executor
