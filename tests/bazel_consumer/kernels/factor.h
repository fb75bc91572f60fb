#define FACTOR 3.0f
