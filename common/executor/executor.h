// Executor: a fixed set of threads that runs batches of independent tasks, for work that is
// faster concurrent but must stay bounded (the controller's applies of one TrainJob's objects:
// a wave costs one request's latency, not the sum, without a thread per object per pass).
//
// RunAll returns when every task of its batch has run. The calling thread takes part: it runs
// the first task and then any of its batch's tasks no thread has taken yet, so a batch finishes
// even when every executor thread is busy with other batches (no deadlock, only less overlap).
// At most `threads` tasks run on the executor at once, plus one per caller.
//
//   Executor applies(8);
//   std::vector<std::function<void()>> tasks = {[&] { a = Apply(x); }, [&] { b = Apply(y); }};
//   applies.RunAll(tasks);   // a and b are set
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace trainer::executor {

class Executor {
 public:
  explicit Executor(size_t threads);
  ~Executor();  // joins the threads (no batch may be running)
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Runs every task and returns when all have finished. A task that throws does not stop the
  // others; the first exception is rethrown here once the batch is done.
  void RunAll(std::vector<std::function<void()>>& tasks);

 private:
  struct Batch;
  struct Item {
    std::function<void()>* task;
    Batch* batch;
  };
  void Work();
  static void Run(const Item& item);
  bool TakeOwn(Batch* batch, Item* item);

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace trainer::executor
