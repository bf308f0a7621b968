# The installable package (docs/install.md): `cmake --install build --prefix P` gives
#   P/lib/libember.so            every Ember library in one shared object
#   P/include/ember/...          the public headers
#   P/bin/                       the tools (emberc, ember-run, ember-sim, ...)
#   P/lib/ember/libember_cpu_plugin.so   the cpu backend the tools load when first used
#   P/lib/ember/libember_onnx_plugin.so  the ONNX importer ember-run loads when first used
#   P/share/ember/isa/           the NPU descriptions and their schema
#   P/lib/cmake/Ember/           EmberConfig.cmake: find_package(Ember) gives Ember::compiler,
#                                Ember::platform, Ember::sim, Ember::runtime, Ember::isa, Ember::session
#   P/lib/pkgconfig/ember.pc     the same for pkg-config
#   P/lib/python3/dist-packages/ember   the Python package (python/)
# Ember's own libraries are static in the build (the tools and tests link them directly);
# libember.so takes each of them whole, so every public function is in it, and links
# what they need (SystemC, LLVM, protobuf/onnx) as shared libraries of the system.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The libraries with public headers, taken whole into libember.so (others, e.g. the
# Verilated models, are pulled in as the devices need them).
set(_whole ember_base ember_isa ember_core ember_interp ember_backends ember_passes ember_onnx
           ember_quant ember_lir ember_npu ember_cpu ember_driver ember_platform ember_sim ember_runtime
           ember_session)
set(_present)
foreach(t ${_whole})
  if(TARGET ${t})
    list(APPEND _present ${t})
  endif()
endforeach()
if(NOT TARGET ember_session)
  message(STATUS "install: libember.so skipped (no application layer: EMBER_WITH_ONNX=OFF)")
  return()
endif()

set(_archives)
foreach(t ${_present})
  list(APPEND _archives $<TARGET_FILE:${t}>)
endforeach()
# Every object comes from the archives; the shared library's own source is empty.
file(WRITE ${CMAKE_BINARY_DIR}/libember.cpp
     "// libember.so: all of its code comes from Ember's libraries (cmake/EmberInstall.cmake).\n")
add_library(ember SHARED ${CMAKE_BINARY_DIR}/libember.cpp)
target_link_options(ember PRIVATE -Wl,--whole-archive ${_archives} -Wl,--no-whole-archive)
if(NOT EMBER_SANITIZE AND NOT EMBER_FUZZ) # the sanitizers' runtimes resolve in the program
  # Every symbol the archives use must be resolved here, not in a consumer.
  target_link_options(ember PRIVATE -Wl,--no-undefined)
endif()
target_link_libraries(ember PRIVATE ${_present})
target_include_directories(ember INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_libraries(ember INTERFACE $<INSTALL_INTERFACE:nlohmann_json::nlohmann_json>)
target_compile_features(ember INTERFACE cxx_std_17)
set_target_properties(ember PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
                                       EXPORT_NAME ember)
add_dependencies(ember ${_present})

# What gets installed.
install(TARGETS ember EXPORT EmberTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
foreach(dir base/include isa/include compiler/include platform/include simulator/include runtime/include
            runtime/session/include)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/isa/ DESTINATION ${CMAKE_INSTALL_DATADIR}/ember/isa
        FILES_MATCHING PATTERN "*.json" PATTERN "include" EXCLUDE PATTERN "src" EXCLUDE)
foreach(tool emberc ember-run ember-sim ember-dse ember-objdump ember-as ember-isa)
  if(TARGET ${tool})
    install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()
if(TARGET ember_cpu_plugin) # found by the tools as ../lib/ember/ (ember/cpu/CpuPlugin.h)
  install(TARGETS ember_cpu_plugin LIBRARY DESTINATION lib/ember)
endif()
if(TARGET ember_onnx_plugin) # the same for the importer (ember/importer/OnnxPlugin.h)
  install(TARGETS ember_onnx_plugin LIBRARY DESTINATION lib/ember)
endif()

set(_cmakedir ${CMAKE_INSTALL_LIBDIR}/cmake/Ember)
install(EXPORT EmberTargets NAMESPACE Ember:: DESTINATION ${_cmakedir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/EmberConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/EmberConfig.cmake INSTALL_DESTINATION ${_cmakedir}
                              PATH_VARS CMAKE_INSTALL_DATADIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/EmberConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/EmberConfig.cmake ${CMAKE_BINARY_DIR}/EmberConfigVersion.cmake
        DESTINATION ${_cmakedir})
configure_file(${PROJECT_SOURCE_DIR}/cmake/ember.pc.in ${CMAKE_BINARY_DIR}/ember.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/ember.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
