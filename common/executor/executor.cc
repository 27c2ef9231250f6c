// Executor (see executor.h).
#include "common/executor/executor.h"

#include <exception>

namespace trainer::executor {

struct Executor::Batch {
  std::mutex mu;
  std::condition_variable done;
  size_t left = 0;
  std::exception_ptr error;
};

Executor::Executor(size_t threads) {
  for (size_t i = 0; i < threads; ++i) {
    threads_.emplace_back([this] { Work(); });
  }
}

Executor::~Executor() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) {
    t.join();
  }
}

void Executor::Run(const Item& item) {
  std::exception_ptr error;
  try {
    (*item.task)();
  } catch (...) {
    error = std::current_exception();
  }
  // Counted down under the batch's lock: the caller may destroy the batch as soon as it sees
  // zero, which it can only do after this lock is released.
  std::lock_guard<std::mutex> lock(item.batch->mu);
  if (error && !item.batch->error) item.batch->error = error;
  if (--item.batch->left == 0) item.batch->done.notify_all();
}

void Executor::Work() {
  while (true) {
    Item item;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping
      item = queue_.front();
      queue_.pop_front();
    }
    Run(item);
  }
}

bool Executor::TakeOwn(Batch* batch, Item* item) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (it->batch == batch) {
      *item = *it;
      queue_.erase(it);
      return true;
    }
  }
  return false;
}

void Executor::RunAll(std::vector<std::function<void()>>& tasks) {
  if (tasks.empty()) return;
  Batch batch;
  batch.left = tasks.size();
  if (tasks.size() > 1) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (size_t i = 1; i < tasks.size(); ++i) queue_.push_back({&tasks[i], &batch});
    }
    cv_.notify_all();
  }
  Run({&tasks[0], &batch});
  for (Item item; TakeOwn(&batch, &item);) {
    Run(item);
  }
  std::unique_lock<std::mutex> lock(batch.mu);
  batch.done.wait(lock, [&] { return batch.left == 0; });
  if (batch.error) std::rethrow_exception(batch.error);
}

}  // namespace trainer::executor
