// clustersim command-line entry point (verbs are wired in apps/cli_*.cpp).
int main() { return 0; }
