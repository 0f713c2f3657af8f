# mnemo-specialize and the spec library it is built on; included from frontend-lib/CMakeLists.txt.
#
# mnemo-spec (spec.c): parses and validates the event catalogue and module specs and computes the
# wire packing; internal, linked by the specializer and by whatever else reads the same files.
# mnemo-specialize (specialize.c): writes the callbacks specialized for chosen modules (bin/).
add_library(mnemo-spec STATIC ${CMAKE_CURRENT_LIST_DIR}/spec.c)
target_include_directories(mnemo-spec PUBLIC ${CMAKE_CURRENT_LIST_DIR} ${YAML_INCLUDE_DIR})
target_link_libraries(mnemo-spec PUBLIC ${YAML_LIBRARY})

add_executable(mnemo-specialize ${CMAKE_CURRENT_LIST_DIR}/specialize.c)
target_link_libraries(mnemo-specialize PRIVATE mnemo-spec)
install(TARGETS mnemo-specialize RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
