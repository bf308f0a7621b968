// ONNX importers of the NN operators (being written).
#include "ember/importer/OnnxOpImporter.h"

namespace ember {

void registerOnnxNNImporters() {}

} // namespace ember
