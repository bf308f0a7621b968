// ONNX importers of the DataMovement operators (being written).
#include "ember/importer/OnnxOpImporter.h"

namespace ember {

void registerOnnxDataMovementImporters() {}

} // namespace ember
