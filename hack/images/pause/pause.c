/* pause: the process of a pod's sandbox container. It holds the pod's namespaces open for the
 * pod's lifetime, reaps the zombies it inherits as PID 1 of a shared PID namespace, and exits
 * at once on SIGTERM or SIGINT, so a sandbox stops without the kill timeout. The role of
 * Kubernetes' own pause image (build/pause/linux/pause.c), written for the test bed's node. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_stop(int sig) {
  (void)sig;
  _exit(0);
}

static void on_child(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(int argc, char** argv) {
  if (argc > 1 && argv[1][0] == '-' && argv[1][1] == 'v') {
    printf("pause (trainer-cpp test bed)\n");
    return 0;
  }
  if (getpid() != 1) {
    fprintf(stderr, "pause: warning: not running as PID 1\n");
  }
  struct sigaction stop = {.sa_handler = on_stop};
  struct sigaction child = {.sa_handler = on_child, .sa_flags = SA_NOCLDSTOP};
  if (sigaction(SIGINT, &stop, NULL) < 0 || sigaction(SIGTERM, &stop, NULL) < 0 ||
      sigaction(SIGCHLD, &child, NULL) < 0) {
    perror("pause: sigaction");
    return 1;
  }
  for (;;) {
    pause();
  }
}
